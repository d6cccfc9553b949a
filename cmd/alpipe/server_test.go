package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
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

func TestQuarantineListAndGet(t *testing.T) {
	q := dropERP(t)
	out, err := run(t, "quarantine", "ls")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, q) || !regexp.MustCompile(`\(\d+ files?; `).MatchString(out) { // other tests quarantine files too
		t.Errorf("quarantine ls does not list %s:\n%s", q, out)
	}
	out, err = run(t, "quarantine", "get", q, "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "linea,codigo,motivo,fila\n") || strings.Count(out, "\n") < 2 {
		t.Errorf("quarantine get printed no CSV with rows:\n%s", out)
	}
	if _, err := run(t, "quarantine", "get", "cuarentena/nope.csv", "-o", "-"); err == nil || !strings.Contains(err.Error(), "quarantine ls lists them") {
		t.Errorf("get of a missing object: error %v", err)
	}
}

func TestStatusObjectHistory(t *testing.T) {
	dropERP(t)
	out, err := run(t, "status", "exportaciones/2026/03/14/pedidos-erp.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gs://alpinashop-catalogo/exportaciones/2026/03/14/pedidos-erp.csv", "generation: ", "attempt: 1", "quarantine get"} {
		if !strings.Contains(out, want) {
			t.Errorf("status OBJECT lacks %q:\n%s", want, out)
		}
	}
	if _, err := run(t, "status", "exportaciones/2026/03/14/otro.csv"); err == nil || !strings.Contains(err.Error(), "no record of") {
		t.Errorf("status of an unknown object: error %v", err)
	}
}

func TestQueryMaxRows(t *testing.T) {
	dropERP(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "default limit of 100, order kept", args: []string{"query", "SELECT i FROM range(250) t(i) ORDER BY i DESC"}, want: []string{"i\n249\n248\n", "\n150\n(first 100 rows shown; more exist"}},
		{name: "numbers grouped", args: []string{"query", "SELECT 1800015 AS n, CAST(89.9 AS DECIMAL(10,2)) AS importe"}, want: []string{"1,800,015", "89.90", "(1 row)"}},
		{name: "row count", args: []string{"query", "SELECT count(*) AS n FROM lineas_pedido"}, want: []string{"(1 row)"}},
		{name: "not a SELECT still runs", args: []string{"query", "SHOW TABLES"}, want: []string{"lineas_pedido", "rows)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	out, err := run(t, "query", "SELECT i FROM range(10) t(i)", "--max-rows", "2")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 {
		t.Errorf("--max-rows 2 printed %d lines, want header, 2 rows and the footer:\n%s", len(lines), out)
	}
}

func TestBackfillRefusesAPrefixWithNothing(t *testing.T) {
	dropERP(t)
	_, err := run(t, "backfill", "exportacion/")
	if err == nil {
		t.Fatal("backfill of a typo'd prefix succeeded")
	}
	for _, want := range []string{`no object under "exportacion/"`, "it holds exportaciones/", "lineas_pedido"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
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
