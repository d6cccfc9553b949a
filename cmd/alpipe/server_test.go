package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/logging"
)

// The tests that need a server share one on a virtual clock, started on
// first use and stopped, with its data folder removed, by TestMain.
var (
	shared     *local.Server
	sharedData string
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	if shared != nil {
		if err := shared.Shutdown("tests done"); err != nil {
			fmt.Fprintln(os.Stderr, "stop the shared server:", err)
		}
	}
	if sharedData != "" {
		os.RemoveAll(sharedData)
	}
	os.Exit(code)
}

func server(t *testing.T) string {
	t.Helper()
	sharedOnce.Do(func() {
		data, err := os.MkdirTemp("", "alpipe-cli-test-")
		if err != nil {
			sharedErr = err
			return
		}
		sharedData = data
		clock := local.VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
		shared, sharedErr = local.Start(context.Background(), local.Options{Addr: "127.0.0.1:0", DataDir: data, Clock: clock, Logger: logging.Discard()})
	})
	if sharedErr != nil {
		t.Fatalf("start local server: %v", sharedErr)
	}
	return shared.URL
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := dispatch(context.Background(), append(args, "--server", server(t)), &out)
	return out.String(), err
}

// dropERP drops the dirty ERP file once and returns its quarantine object.
var dropOnce sync.Once
var quarantined string

func dropERP(t *testing.T) string {
	t.Helper()
	dropOnce.Do(func() {
		out, err := run(t, "drop", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv")
		if err != nil && !strings.Contains(err.Error(), "rows quarantined") { // the dirty file quarantines rows
			t.Fatalf("drop: %v", err)
		}
		for _, l := range strings.Split(out, "\n") {
			if q, ok := strings.CutPrefix(strings.TrimSpace(l), "fetch it:   alpipe quarantine get "); ok {
				quarantined = q
			}
		}
		if quarantined == "" {
			t.Fatalf("drop output names no quarantine file to fetch:\n%s", out)
		}
	})
	if quarantined == "" {
		t.Fatal("the ERP drop failed earlier")
	}
	return quarantined
}

// TestCommandsOnTheServer runs commands against the shared server after
// the dirty ERP drop: {Q} in args and want stands for its quarantine
// object. want is in stdout, wantErr in the error, match matches stdout.
func TestCommandsOnTheServer(t *testing.T) {
	const erpObject = "gs://alpinashop-catalogo/exportaciones/2026/03/14/pedidos-erp.csv"
	tests := []struct {
		name    string
		args    []string
		want    []string
		match   string
		wantErr []string
	}{
		{name: "ls of the landing prefix", args: []string{"ls", "exportaciones/2026/03/14/"}, want: []string{erpObject, "(1 object;"}},
		{name: "ls of the quarantine bucket", args: []string{"ls", "gs://alpinashop-cuarentena/"}, want: []string{"{Q}"}},
		{name: "ls of an empty prefix", args: []string{"ls", "nothing-here/"},
			want: []string{"no objects under gs://alpinashop-catalogo/nothing-here/"}},
		// Other tests quarantine files too.
		{name: "quarantine ls", args: []string{"quarantine", "ls"}, want: []string{"{Q}"}, match: `\(\d+ files?; `},
		{name: "quarantine get: a CSV with rows", args: []string{"quarantine", "get", "{Q}", "-o", "-"}, match: `^linea,codigo,motivo,fila\n.*\n`},
		{name: "quarantine get of a missing object", args: []string{"quarantine", "get", "cuarentena/nope.csv", "-o", "-"},
			wantErr: []string{"quarantine ls lists them"}},
		{name: "status OBJECT", args: []string{"status", "exportaciones/2026/03/14/pedidos-erp.csv"},
			want: []string{erpObject, "generation: ", "attempt: 1", "quarantine get"}},
		{name: "status --state done", args: []string{"status", "--state", "done"}, want: []string{erpObject, "in state DONE"}},
		{name: "status --watch 10ms", args: []string{"status", "--watch", "10ms"}, wantErr: []string{"at least 1s"}},
		{name: "status of an unknown object", args: []string{"status", "exportaciones/2026/03/14/otro.csv"}, wantErr: []string{"no record of"}},
		{name: "backfill of a typo'd prefix", args: []string{"backfill", "exportacion/"},
			wantErr: []string{`no object under "exportacion/"`, "it holds exportaciones/", "lineas_pedido"}},
		{name: "query: default limit of 100, order kept", args: []string{"query", "SELECT i FROM range(250) t(i) ORDER BY i DESC"},
			want: []string{"i\n249\n248\n", "\n150\n(first 100 rows shown; more exist"}},
		{name: "query: numbers grouped", args: []string{"query", "SELECT 1800015 AS n, CAST(89.9 AS DECIMAL(10,2)) AS importe"},
			want: []string{"1,800,015", "89.90", "(1 row)"}},
		{name: "query: row count", args: []string{"query", "SELECT count(*) AS n FROM lineas_pedido"}, want: []string{"(1 row)"}},
		{name: "query: not a SELECT still runs", args: []string{"query", "SHOW TABLES"}, want: []string{"lineas_pedido", "rows)"}},
		{name: "query --max-rows 2: header, 2 rows and the footer", args: []string{"query", "SELECT i FROM range(10) t(i)", "--max-rows", "2"},
			match: `^([^\n]+\n){4}$`},
	}
	q := dropERP(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := slices.Clone(tt.args)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "{Q}", q)
			}
			out, err := run(t, args...)
			if (err != nil) != (len(tt.wantErr) > 0) {
				t.Fatalf("error %v, want one containing %q; output:\n%s", err, tt.wantErr, out)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "{Q}", q); !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tt.match != "" && !regexp.MustCompile(tt.match).MatchString(out) {
				t.Errorf("output does not match %s:\n%s", tt.match, out)
			}
		})
	}
}

func TestTickRefusesToMoveTheClockBack(t *testing.T) {
	if _, err := run(t, "tick", "--now", "2026-03-14T18:00:00Z"); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, "tick", "--now", "2026-03-14T17:30:00Z")
	if err == nil || !strings.Contains(err.Error(), "is earlier than the server's clock, 2026-03-14T18:00:00Z") {
		t.Errorf("tick back in time: error %v", err)
	}
	out, err := run(t, "tick", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"lag_seconds"`) && !strings.Contains(out, `"aggregations"`) || strings.Contains(out, `"Lag"`) {
		t.Errorf("tick JSON not in the house style:\n%s", out)
	}
}
