package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/render"
)

// The tests that need a server share one on a virtual clock, started on
// first use and stopped, with its data folder removed, by TestMain.
var (
	shared     *local.Server
	sharedData string
	// startShared's error is every caller's.
	startShared = sync.OnceValue(func() error {
		var err error
		if sharedData, err = os.MkdirTemp("", "alpipe-cli-test-"); err != nil {
			return err
		}
		clk := clock.Virtual(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
		shared, err = local.Start(context.Background(), local.Options{Addr: "127.0.0.1:0",
			DataDir: sharedData, Clock: clk, Logger: logging.Discard()})
		return err
	})
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
	os.RemoveAll(sharedData) // "" when no test started it: nothing to remove
	os.Exit(code)
}

func server(t *testing.T) string {
	t.Helper()
	if err := startShared(); err != nil {
		t.Fatalf("start local server: %v", err)
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
// The rows run in order: the refusal to move the clock back needs the row
// before it to have set the server's clock to 18:00.
//
// A query error (wantText) reads as a sentence: what a person sees after
// "alpipe: " is the reason in the engine's words without the request's
// plumbing, and DuckDB's SQL line and caret on lines of their own,
// aligned. The server's caps are named by their variable, and no row of a
// refused or stopped answer is printed as if it were the whole answer.
func TestCommandsOnTheServer(t *testing.T) {
	const erpObject = "gs://alpinashop-catalogo/exportaciones/2026/03/14/pedidos-erp.csv"
	tests := []struct {
		name     string
		args     []string
		want     []string
		match    string
		wantErr  []string
		wantText string // the whole error as printed, with nothing on stdout
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
		// The LIMIT wrap must not end inside the comment.
		{name: "query: a trailing comment", args: []string{"query", "SELECT 1 AS a -- done", "--format", "csv"}, match: `^a\n1\n$`},
		{name: "query --max-rows 2: header, 2 rows and the footer", args: []string{"query", "SELECT i FROM range(10) t(i)", "--max-rows", "2"},
			match: `^([^\n]+\n){4}$`},
		{name: "tick --now moves the clock", args: []string{"tick", "--now", "2026-03-14T18:00:00Z"}},
		{name: "tick refuses to move the clock back", args: []string{"tick", "--now", "2026-03-14T17:30:00Z"},
			wantErr: []string{"is earlier than the server's clock, 2026-03-14T18:00:00Z"}},
		{name: "tick JSON in the house style", args: []string{"tick", "--format", "json"},
			want: []string{`"aggregations": [`, `"dead_letters_pending": `}},
		{name: "query: syntax error with its caret", args: []string{"query", "SELEC * FROM ventas_diarias_sku"},
			wantText: "query: syntax error at or near \"SELEC\"\n  LINE 1: SELEC * FROM ventas_diarias_sku\n          ^"},
		{name: "query: several statements", args: []string{"query", "SELECT 1; SELECT 2"},
			wantText: "query: one statement at a time: this SQL holds 2 statements separated by ';'; send them one by one"},
		{name: "query: a cap stays one line", args: []string{"query", "SELECT 1", "--max-rows", "1000001"},
			wantText: "query: max_rows 1000001 is above this server's cap of 1000000 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "query: other commands' errors stay one line", args: []string{"query", "SELECT 1", "--format", "xml"},
			wantText: `query: --format "xml": want table or csv or json or jsonl`},
		{name: "query: every row, past the cap: none printed",
			args: []string{"query", "SELECT i FROM range(1000001) t(i)", "--max-rows", "0"},
			wantText: "query: incomplete answer: answer stopped at 1000000 rows: ALPIPE_QUERY_MAX_ROWS (no row printed: " +
				"they are not the whole answer; add a LIMIT or --max-rows)"},
	}
	q := dropERP(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := slices.Clone(tt.args)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "{Q}", q)
			}
			out, err := run(t, args...)
			if (err != nil) != (len(tt.wantErr) > 0 || tt.wantText != "") {
				t.Fatalf("error %v, want one containing %q; output:\n%s", err, tt.wantErr, out)
			}
			if tt.wantText != "" {
				if diff := cmp.Diff(tt.wantText, errorText(err)); diff != "" || out != "" {
					t.Errorf("error as printed (-want +got):\n%s\nprinted %.200q, want nothing", diff, out)
				}
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

func TestFilesInStateNewestFirstAndBounded(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 3, 14, h, 0, 0, 0, time.UTC) }
	rec := func(obj string, st ledger.State, h int) ledger.Record {
		return ledger.Record{Key: ledger.Key{Bucket: "b", Object: obj, Generation: int64(h)}, State: st, StartedAt: at(h), Reason: "load: backend\nunavailable"}
	}
	recs := []ledger.Record{rec("a.csv", ledger.Failed, 1), rec("b.csv", ledger.Done, 2), rec("c.csv", ledger.Failed, 3), rec("d.csv", ledger.Failed, 2)}
	var out bytes.Buffer
	if err := filesInState(recs, ledger.Failed, 2, "text", &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"started               generation  object        reason",
		"2026-03-14 03:00 UTC           3  gs://b/c.csv  load: backend unavailable",
		"2026-03-14 02:00 UTC           2  gs://b/d.csv  load: backend unavailable",
		"(2 files in state FAILED; 1 more: raise --files)",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimRight(out.String(), "\n"), "\n")); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestWithoutFlag(t *testing.T) {
	got := withoutFlag([]string{"--watch", "10s", "--since", "1h", "-watch=5s", "--format=json"}, "watch")
	if diff := cmp.Diff([]string{"--since", "1h", "--format=json"}, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func TestWatchRepeatsTheReport(t *testing.T) {
	var out bytes.Buffer
	n := 0
	err := watch(context.Background(), time.Millisecond, 3, &out, func() error { n++; out.WriteString("report\n"); return nil })
	if err != nil || n != 3 || strings.Count(out.String(), "Ctrl-C stops") != 3 {
		t.Errorf("watch ran the report %d times (err %v):\n%s", n, err, out.String())
	}
}

// TestReconcileThroughTheServer: the report through serve is the one
// reconcile makes reading that warehouse in-process. The stream's own ES
// order has no batch line, so ES stays unexplained and the command fails.
func TestReconcileThroughTheServer(t *testing.T) {
	dropERP(t)
	history := filepath.Join(t.TempDir(), "pedidos.jsonl")
	lines := []string{
		`{"llegada":"2026-03-14T16:11:00Z","momento_evento":"2026-03-14T16:10:00Z","pedido":{"pedido_id":"P-REC-1","cliente_id":"C-1","pais":"ES","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}}`,
		`{"llegada":"2026-03-14T16:21:00Z","momento_evento":"2026-03-14T16:20:00Z","pedido":{"pedido_id":"PED-2026-0314-0002","cliente_id":"CLI-00958","pais":"ES","importe_total":"1,5e3","lineas":[]}}`,
	}
	if err := os.WriteFile(history, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PUBSUB_EMULATOR_HOST", "")
	if _, err := run(t, "publish", history); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if _, err := run(t, "tick", "--now", "2026-03-14T18:00:00Z"); err != nil {
		t.Fatalf("tick: %v", err)
	}

	var out string // 14 March's report
	for _, date := range []string{"2026-03-14", "2026-03-13"} {
		t.Run(date, func(t *testing.T) {
			got, err := run(t, "reconcile", "--date", date, "--format", "json")
			if date == "2026-03-14" {
				out = got
			}
			want, wantErr := inProcessReconcile(t, date)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report through the server (-in process +served):\n%s", diff)
			}
			if wantErr == "" && err != nil || wantErr != "" && (err == nil || err.Error() != wantErr) {
				t.Errorf("error = %v, want %q", err, wantErr)
			}
		})
	}
	// The agreement is no proof while a read answers nothing; what the
	// figures mean is package reconcile's to prove (TestRun).
	var rep reconcile.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("reconcile --format json: %v\n%s", err, out)
	}
	if got := []int{len(rep.Countries), len(rep.Hours), len(rep.Explanations)}; !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("countries, hours, explanations: %v, want one of each:\n%s", got, out)
	}
}

// inProcessReconcile is the report, as `reconcile --format json` prints
// it, read from the shared server's warehouse in this process, and the
// command's error text ("" for none).
func inProcessReconcile(t *testing.T, date string) (string, string) {
	t.Helper()
	rep, err := reconcile.Run(context.Background(), shared.App.Warehouse, reconcile.Request{Date: date, Aggregation: "ventas_hora_pais", Location: time.UTC})
	if err != nil {
		t.Fatalf("reconcile in process: %v", err)
	}
	var out bytes.Buffer
	if err := render.JSON(&out, rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		return out.String(), ""
	}
	return out.String(), "reconcile " + date + ": unexplained differences in " + strings.Join(rep.Unexplained, ", ")
}
