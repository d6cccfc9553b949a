package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fakeWarehouse answers every query with a fixed result; it records the
// SQL so tests can see what was asked.
type fakeWarehouse struct {
	res warehouse.Result
	err error
	sql []string
}

func (f *fakeWarehouse) Query(_ context.Context, sql string) (warehouse.Result, error) {
	f.sql = append(f.sql, sql)
	return f.res, f.err
}

type fakeLedger struct {
	recs []ledger.Record
	err  error
}

func (f fakeLedger) List(context.Context) ([]ledger.Record, error) { return f.recs, f.err }

func fakeWatermark(w time.Time, err error) dashboard.WatermarkFunc {
	return func(_ context.Context, agg string) (time.Time, error) {
		if agg != dashboard.DefaultAggregation {
			return time.Time{}, errors.New("unexpected aggregation " + agg)
		}
		return w, err
	}
}

var (
	now = time.Date(2026, 3, 14, 18, 22, 30, 0, time.UTC)
	wm  = time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)
)

func viewResult(rows ...[]string) warehouse.Result {
	return warehouse.Result{Columns: warehouse.ViewColumns[1:], Rows: rows}
}

// The view's columns (minus aggregation) in order: window_start,
// window_end, pais, importe, pedidos, unidades, timing, pane_index.
var goodRows = [][]string{
	{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "ES", "100.1", "1", "2", "ON_TIME", "1"},
	{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "PT", "60.05", "2", "2", "LATE", "2"},
	{"2026-03-14T18:00:00Z", "2026-03-14T19:00:00Z", "FR", "0.000000001", "1", "1", "EARLY", "0"},
	{"2026-03-14T18:00:00Z", "2026-03-14T19:00:00Z", "ES", "9223372036.854775807", "1", "3", "EARLY", "0"},
}

func records(n int) []ledger.Record {
	recs := make([]ledger.Record, n)
	for i := range recs {
		recs[i] = ledger.Record{
			Key:        ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/14/f" + string(rune('a'+i)) + ".csv", Generation: int64(1000 + i)},
			State:      ledger.Done,
			Feed:       "lineas_pedido",
			Counts:     ledger.Counts{Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "fecha:invalid_date": 2}},
			StartedAt:  now.Add(-time.Duration(i) * time.Minute),
			FinishedAt: now.Add(-time.Duration(i)*time.Minute + time.Second),
		}
	}
	return recs
}

func getSnapshot(t *testing.T, h http.Handler) (dashboard.Snapshot, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d: %s", dashboard.APIPath, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var snap dashboard.Snapshot
	if err := json.Unmarshal(rec.Body.Bytes(), &snap); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return snap, rec.Body.Bytes()
}

func dec(t *testing.T, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAPIGolden pins the JSON the page reads, byte for byte: amounts as
// exact strings, the watermark with its lag, the newest Files records.
func TestAPIGolden(t *testing.T) {
	wh := &fakeWarehouse{res: viewResult(goodRows...)}
	h := dashboard.Handler(dashboard.Source{
		Warehouse:  wh,
		Ledger:     fakeLedger{recs: records(4)},
		Watermarks: fakeWatermark(wm, nil),
		Now:        func() time.Time { return now },
		Files:      3,
	})
	_, body := getSnapshot(t, h)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "api.golden.json")
	if *update {
		if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
		t.Errorf("snapshot JSON (-want +got):\n%s", diff)
	}
	for _, exact := range []string{`"importe":"0.000000001"`, `"importe":"9223372036.854775807"`, `"importe":"60.05"`} {
		if !bytes.Contains(body, []byte(exact)) {
			t.Errorf("body lacks %s: money must stay an exact string", exact)
		}
	}
	if len(wh.sql) != 1 || !strings.Contains(wh.sql[0], "LIMIT 24") || !strings.Contains(wh.sql[0], "'ventas_hora_pais'") {
		t.Errorf("queries = %q, want one over the 24 newest windows of ventas_hora_pais", wh.sql)
	}
}

func TestAPI(t *testing.T) {
	full := func() dashboard.Source {
		return dashboard.Source{
			Warehouse:  &fakeWarehouse{res: viewResult(goodRows[:1]...)},
			Ledger:     fakeLedger{recs: records(1)},
			Watermarks: fakeWatermark(wm, nil),
			Now:        func() time.Time { return now },
		}
	}
	bar := dashboard.Bar{
		WindowStart: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), WindowEnd: time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC),
		Pais: "ES", Importe: dec(t, "100.1"), Pedidos: 1, Unidades: 2, Timing: "ON_TIME", PaneIndex: 1,
	}
	file := dashboard.File{
		Object: "gs://alpinashop-catalogo/exportaciones/2026/03/14/fa.csv#1000", State: ledger.Done, Feed: "lineas_pedido",
		Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "fecha:invalid_date": 2},
		StartedAt: now, FinishedAt: now.Add(time.Second),
	}
	lag := &dashboard.Watermark{At: wm, LagSeconds: 1350, Lag: "22m30s"}
	tests := []struct {
		name   string
		source func() dashboard.Source
		want   dashboard.Snapshot
	}{
		{
			name:   "every part",
			source: full,
			want:   dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Watermark: lag, Bars: []dashboard.Bar{bar}, Files: []dashboard.File{file}},
		},
		{
			name: "no order accepted yet: watermark null, empty lists not null",
			source: func() dashboard.Source {
				s := full()
				s.Warehouse = &fakeWarehouse{res: viewResult()}
				s.Ledger = fakeLedger{}
				s.Watermarks = fakeWatermark(time.Time{}, nil)
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Bars: []dashboard.Bar{}, Files: []dashboard.File{}},
		},
		{
			name: "a failing warehouse leaves the other parts",
			source: func() dashboard.Source {
				s := full()
				s.Warehouse = &fakeWarehouse{err: errors.New("bigquery: 503")}
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Watermark: lag, Bars: []dashboard.Bar{}, Files: []dashboard.File{file},
				Errors: map[string]string{"bars": "query ventas_hora_pais: bigquery: 503"}},
		},
		{
			name: "failing ledger and watermark",
			source: func() dashboard.Source {
				s := full()
				s.Ledger = fakeLedger{err: errors.New("list ledger: unavailable")}
				s.Watermarks = fakeWatermark(time.Time{}, errors.New("deadline exceeded"))
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Bars: []dashboard.Bar{bar}, Files: []dashboard.File{},
				Errors: map[string]string{"files": "list ledger: unavailable", "watermark": "read watermark of ventas_hora_pais: deadline exceeded"}},
		},
		{
			name:   "nothing configured",
			source: func() dashboard.Source { return dashboard.Source{Now: func() time.Time { return now }} },
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Bars: []dashboard.Bar{}, Files: []dashboard.File{},
				Errors: map[string]string{"bars": "not configured in this process", "files": "not configured in this process", "watermark": "not configured in this process"}},
		},
		{
			name: "an amount that is not a decimal is an error, never a guess",
			source: func() dashboard.Source {
				s := full()
				s.Warehouse = &fakeWarehouse{res: viewResult([]string{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "ES", "1e3", "1", "1", "EARLY", "0"})}
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Watermark: lag, Bars: []dashboard.Bar{}, Files: []dashboard.File{file},
				Errors: map[string]string{"bars": `ventas_hora_pais row 1: importe "1e3": not a decimal number`}},
		},
		{
			name: "a missing column is reported",
			source: func() dashboard.Source {
				s := full()
				s.Warehouse = &fakeWarehouse{res: warehouse.Result{Columns: []string{"window_start"}, Rows: [][]string{{"x"}}}}
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Watermark: lag, Bars: []dashboard.Bar{}, Files: []dashboard.File{file},
				Errors: map[string]string{"bars": `ventas_hora_pais: answer has no column "window_end" (columns [window_start])`}},
		},
		{
			name: "bad timestamps and counts are all named",
			source: func() dashboard.Source {
				s := full()
				s.Warehouse = &fakeWarehouse{res: viewResult([]string{"yesterday", "2026-03-14T18:00:00Z", "ES", "1", "one", "1", "EARLY", "0"})}
				return s
			},
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Watermark: lag, Bars: []dashboard.Bar{}, Files: []dashboard.File{file},
				Errors: map[string]string{"bars": `ventas_hora_pais row 1: window_start "yesterday": not an RFC 3339 time; pedidos "one": not an integer`}},
		},
		{
			name: "an aggregation name that could escape the SQL literal is refused",
			source: func() dashboard.Source {
				s := full()
				s.Aggregation = "x' OR '1'='1"
				s.Watermarks = nil
				return s
			},
			want: dashboard.Snapshot{Aggregation: "x' OR '1'='1", Now: now, Bars: []dashboard.Bar{}, Files: []dashboard.File{file},
				Errors: map[string]string{"bars": `aggregation name "x' OR '1'='1": want letters, digits and '_'`, "watermark": "not configured in this process"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := getSnapshot(t, dashboard.Handler(tt.source()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLagUsesProcessingTime(t *testing.T) {
	tests := []struct {
		name string
		now  time.Time
		want dashboard.Watermark
	}{
		{name: "behind", now: wm.Add(10*time.Minute + 999*time.Millisecond), want: dashboard.Watermark{At: wm, LagSeconds: 600, Lag: "10m0s"}},
		{name: "at now", now: wm, want: dashboard.Watermark{At: wm, LagSeconds: 0, Lag: "0s"}},
		{name: "a day", now: wm.Add(24 * time.Hour), want: dashboard.Watermark{At: wm, LagSeconds: 86400, Lag: "24h0m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := dashboard.Take(context.Background(), dashboard.Source{Watermarks: fakeWatermark(wm, nil), Now: func() time.Time { return tt.now }})
			if snap.Watermark == nil {
				t.Fatal("no watermark")
			}
			if diff := cmp.Diff(tt.want, *snap.Watermark); diff != "" {
				t.Errorf("watermark (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRoutes: mounted at "/" of the functions framework's mux the handler
// receives every path no function claims, so it answers only its own.
func TestRoutes(t *testing.T) {
	h := dashboard.Handler(dashboard.Source{Refresh: 1500 * time.Millisecond})
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		body               string // a substring
	}{
		{name: "page", method: "GET", path: "/", status: 200, contentType: "text/html; charset=utf-8", body: `data-refresh-ms="1500"`},
		{name: "page HEAD", method: "HEAD", path: "/", status: 200, contentType: "text/html; charset=utf-8"},
		{name: "script", method: "GET", path: "/assets/dashboard.js", status: 200, contentType: "text/javascript; charset=utf-8", body: `fetch("api/dashboard"`},
		{name: "styles", method: "GET", path: "/assets/dashboard.css", status: 200, contentType: "text/css; charset=utf-8", body: ".t-LATE"},
		{name: "snapshot", method: "GET", path: "/api/dashboard", status: 200, contentType: "application/json", body: `"aggregation":"ventas_hora_pais"`},
		{name: "a function's path with a slash too many", method: "POST", path: "/IngestCSV/", status: 404},
		{name: "an unknown path", method: "GET", path: "/favicon.ico", status: 404},
		{name: "no directory listing", method: "GET", path: "/assets/", status: 404},
		{name: "the page is read only", method: "POST", path: "/", status: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.status {
				t.Fatalf("%s %s: HTTP %d, want %d", tt.method, tt.path, rec.Code, tt.status)
			}
			if tt.contentType != "" && rec.Header().Get("Content-Type") != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", rec.Header().Get("Content-Type"), tt.contentType)
			}
			b, _ := io.ReadAll(rec.Body)
			if !strings.Contains(string(b), tt.body) {
				t.Errorf("body lacks %q:\n%.300s", tt.body, b)
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page CSP = %q: want scripts from the handler only", csp)
	}
}
