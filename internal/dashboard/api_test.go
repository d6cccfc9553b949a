package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// fakeWarehouse answers the bars read with res (or err) and the summary
// read (discard_summary) with summary (or summaryErr); it records each
// statement, and its SQL as DuckDB would run it, so tests can see what was
// asked.
type fakeWarehouse struct {
	res        warehouse.Result
	err        error
	summary    warehouse.Result
	summaryErr error

	mu    sync.Mutex // the snapshot's two reads run at once
	sql   []string
	stmts []warehouse.Statement
}

func (f *fakeWarehouse) Read(_ context.Context, s warehouse.Statement) (warehouse.Result, error) {
	f.mu.Lock()
	f.sql = append(f.sql, s.Inline())
	f.stmts = append(f.stmts, s)
	f.mu.Unlock()
	if s.Name() == "discard_summary" {
		if f.summary.Columns == nil {
			return summaryResult(), f.summaryErr
		}
		return f.summary, f.summaryErr
	}
	return f.res, f.err
}

// summaryResult is the summary query's answer: kind, what, n, pedido_id,
// reason, event_time, window_start, received_at.
func summaryResult(rows ...[]string) warehouse.Result {
	return warehouse.Result{Columns: []string{"kind", "what", "n", "pedido_id", "reason", "event_time", "window_start", "received_at"}, Rows: rows}
}

var goodSummary = [][]string{
	{"count", "dead_letter", "2", "NULL", "NULL", "NULL", "NULL", "2026-03-14T18:10:00Z"},
	{"count", "too_late", "1", "NULL", "NULL", "NULL", "NULL", "2026-03-14T18:21:00Z"},
	{"row", "dead_letter", "0", "NULL", "invalid: body is not JSON", "NULL", "NULL", "2026-03-14T18:01:00Z"},
	{"row", "dead_letter", "0", "P-9", "invalid: importe_total: not a decimal", "2026-03-14T17:58:00Z", "NULL", "2026-03-14T18:10:00Z"},
	{"row", "too_late", "0", "P-5", "too_late", "2026-03-14T15:10:00Z", "2026-03-14T15:00:00Z", "2026-03-14T18:21:00Z"},
	{"country", "PT", "1", "NULL", "NULL", "NULL", "NULL", "NULL"},
	{"country", "ES", "2", "NULL", "NULL", "NULL", "NULL", "NULL"},
	{"country", "FR", "1", "NULL", "NULL", "NULL", "NULL", "NULL"},
}

// fakeStream answers Status with one aggregation's state.
type fakeStream struct {
	st  stream.AggregationStatus
	err error
}

func (f fakeStream) Status(context.Context, time.Time) ([]stream.AggregationStatus, error) {
	return []stream.AggregationStatus{f.st}, f.err
}

var goodStream = fakeStream{st: stream.AggregationStatus{
	Aggregation: "ventas_hora_pais", Watermark: wm, LastAccepted: now.Add(-90 * time.Second),
	OpenWindows: []stream.OpenWindow{
		{Start: wm.Add(-time.Hour), End: wm, Key: "ES", Panes: 2, OnTime: window.OnTimeDone},
		{Start: wm.Add(-time.Hour), End: wm, Key: "PT", Panes: 3, OnTime: window.OnTimeDone},
		{Start: wm, End: wm.Add(time.Hour), Key: "ES", Panes: 1, OnTime: window.OnTimePending},
	},
	Failing: []stream.FailingWindow{
		{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/windows/20260314T170000Z_PT", WindowStart: wm.Add(-time.Hour), WindowEnd: wm,
			Key: "PT", Error: "decode aggregations/ventas_hora_pais/windows/20260314T170000Z_PT: unexpected end of JSON input", Since: now.Add(-time.Hour)},
		{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/agenda/20260314T170000Z",
			Error: "aggregations/ventas_hora_pais/agenda/20260314T170000Z: state layout 2 found, this binary reads layout 1"},
	},
}}

type fakeLedger struct {
	recs []ledger.Record
	err  error
}

func (f fakeLedger) List(context.Context) ([]ledger.Record, error) { return f.recs, f.err }

type watermarkFunc func(ctx context.Context, aggregation string) (time.Time, error)

func (f watermarkFunc) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	return f(ctx, aggregation)
}

func fakeWatermark(w time.Time, err error) watermarkFunc {
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
			Quarantine: "cuarentena/lineas_pedido/2026/03/14/f" + string(rune('a'+i)) + ".csv.rechazos.csv",
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

// TestAPIGolden pins the JSON the page reads, byte for byte: amounts as
// exact strings, the watermark with its lag, freshness, discards, open
// windows, the newest Files records with their quarantine links.
func TestAPIGolden(t *testing.T) {
	wh := &fakeWarehouse{res: viewResult(goodRows...), summary: summaryResult(goodSummary...)}
	h := dashboard.Handler(dashboard.Source{
		Warehouse:        wh,
		Ledger:           fakeLedger{recs: records(4)},
		Watermarks:       fakeWatermark(wm, nil),
		Stream:           goodStream,
		Now:              func() time.Time { return now },
		Files:            3,
		Latest:           2,
		QuarantineBucket: "alpinashop-cuarentena",
	})
	_, body := getSnapshot(t, h)
	var pretty bytes.Buffer
	check(t, json.Indent(&pretty, body, "", "  "))
	replaytest.Golden(t, "testdata/api.golden.json", pretty.Bytes())
	for _, exact := range []string{`"importe":"0.000000001"`, `"importe":"9223372036.854775807"`, `"importe":"60.05"`} {
		if !bytes.Contains(body, []byte(exact)) {
			t.Errorf("body lacks %s: money must stay an exact string", exact)
		}
	}
	// One query for the bars, one for everything else: a page left open
	// against BigQuery costs two jobs per refresh, whatever the data.
	slices.Sort(wh.sql) // they run concurrently; "SELECT 'count'..." (the summary) sorts before "SELECT v...."
	if len(wh.sql) != 2 {
		t.Fatalf("%d queries per refresh, want 2:\n%s", len(wh.sql), strings.Join(wh.sql, "\n---\n"))
	}
	bars, summary := wh.sql[1], wh.sql[0]
	if !strings.Contains(bars, "LIMIT 24") || !strings.Contains(bars, "'ventas_hora_pais'") {
		t.Errorf("bars query = %q, want the 24 newest windows of ventas_hora_pais", bars)
	}
	if !strings.Contains(summary, "<= 2") || !strings.Contains(summary, "aggregation = 'ventas_hora_pais'") {
		t.Errorf("summary query = %q, want the 2 newest discards, too-late ones of ventas_hora_pais only", summary)
	}
}

func TestAPI(t *testing.T) {
	full := func() dashboard.Source {
		return dashboard.Source{
			Warehouse:  &fakeWarehouse{res: viewResult(goodRows[:1]...)},
			Ledger:     fakeLedger{recs: records(1)},
			Watermarks: fakeWatermark(wm, nil),
			Stream:     goodStream,
			Now:        func() time.Time { return now },
		}
	}
	bar := wantBar("17:00", "ES", "100.1", 1, 2, "ON_TIME", 1)
	file := dashboard.File{
		Object: "gs://alpinashop-catalogo/exportaciones/2026/03/14/fa.csv#1000", Bucket: "alpinashop-catalogo",
		Name: "exportaciones/2026/03/14/fa.csv", Generation: 1000, State: ledger.Done, Feed: "lineas_pedido",
		Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "fecha:invalid_date": 2},
		StartedAt: now, FinishedAt: now.Add(time.Second), Quarantine: "cuarentena/lineas_pedido/2026/03/14/fa.csv.rechazos.csv",
	}
	lag := &dashboard.Watermark{At: wm, LagSeconds: 1350}
	accepted := now.Add(-90 * time.Second)
	fresh := dashboard.Freshness{LastOrderAccepted: &accepted, LastFileLoaded: &dashboard.LoadedFile{
		Bucket: "alpinashop-catalogo", Name: "exportaciones/2026/03/14/fa.csv", Generation: 1000, FinishedAt: now.Add(time.Second)}}
	open := &dashboard.OpenWindows{Cells: 3, Windows: 2, Latest: []dashboard.OpenWindow{
		{WindowStart: wm, WindowEnd: wm.Add(time.Hour), Pais: "ES", Panes: 1, OnTime: "PENDING"},
		{WindowStart: wm.Add(-time.Hour), WindowEnd: wm, Pais: "PT", Panes: 3, OnTime: "DONE"},
		{WindowStart: wm.Add(-time.Hour), WindowEnd: wm, Pais: "ES", Panes: 2, OnTime: "DONE"},
	}, FailingCells: 2, Failing: []dashboard.FailingCell{
		{WindowStart: ptr(wm.Add(-time.Hour)), WindowEnd: ptr(wm), Pais: "PT", Document: "aggregations/ventas_hora_pais/windows/20260314T170000Z_PT",
			Error: "decode aggregations/ventas_hora_pais/windows/20260314T170000Z_PT: unexpected end of JSON input", Since: ptr(now.Add(-time.Hour))},
		{Document: "aggregations/ventas_hora_pais/agenda/20260314T170000Z",
			Error: "aggregations/ventas_hora_pais/agenda/20260314T170000Z: state layout 2 found, this binary reads layout 1"},
	}}
	// snap is a snapshot of every part but those edit changes.
	snap := func(edit func(*dashboard.Snapshot)) dashboard.Snapshot {
		s := dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Range: lastDay(now), Watermark: lag, Freshness: fresh, Bars: []dashboard.Bar{bar},
			Countries: []string{}, Discards: noDiscards(now), OpenWindows: open, Files: []dashboard.File{file}}
		edit(&s)
		return s
	}
	// barsFailed is every part but the bars, which failed with why.
	barsFailed := func(why string) dashboard.Snapshot {
		return snap(func(s *dashboard.Snapshot) { s.Bars, s.Errors = []dashboard.Bar{}, map[string]string{"bars": why} })
	}
	bars := func(res warehouse.Result) func(*dashboard.Source) {
		return func(s *dashboard.Source) { s.Warehouse = &fakeWarehouse{res: res} }
	}
	tests := []struct {
		name string
		edit func(*dashboard.Source) // of full()
		want dashboard.Snapshot
	}{
		// Before any order, on real engines: TestSnapshotOnRealEngines.
		{name: "every part", want: snap(func(*dashboard.Snapshot) {})},
		{
			name: "a failing warehouse leaves the other parts",
			edit: func(s *dashboard.Source) { s.Warehouse = &fakeWarehouse{err: errors.New("bigquery: 503")} },
			want: barsFailed("query ventas_hora_pais: bigquery: 503"),
		},
		{
			name: "failing ledger and watermark",
			edit: func(s *dashboard.Source) {
				s.Ledger = fakeLedger{err: errors.New("list ledger: unavailable")}
				s.Watermarks = fakeWatermark(time.Time{}, errors.New("deadline exceeded"))
			},
			want: snap(func(s *dashboard.Snapshot) {
				s.Watermark, s.Files, s.Freshness.LastFileLoaded = nil, []dashboard.File{}, nil
				s.Errors = map[string]string{"files": "list ledger: unavailable", "watermark": "read watermark of ventas_hora_pais: deadline exceeded"}
			}),
		},
		{
			name: "nothing configured",
			edit: func(s *dashboard.Source) { *s = dashboard.Source{Now: s.Now} },
			want: dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: now, Range: lastDay(now), Bars: []dashboard.Bar{}, Files: []dashboard.File{}, Countries: []string{}, Discards: noDiscards(now),
				Errors: map[string]string{"bars": "not configured in this process", "discards": "not configured in this process", "files": "not configured in this process",
					"stream": "not configured in this process", "watermark": "not configured in this process"}},
		},
		{
			name: "an amount that is not a decimal is an error, never a guess",
			edit: bars(viewResult([]string{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "ES", "1e3", "1", "1", "EARLY", "0"})),
			want: barsFailed(`ventas_hora_pais row 1: importe "1e3": not a decimal number`),
		},
		{
			name: "a missing column is reported",
			edit: bars(warehouse.Result{Columns: []string{"window_start"}, Rows: [][]string{{"x"}}}),
			want: barsFailed(`ventas_hora_pais: answer has no column "window_end" (columns [window_start])`),
		},
		{
			name: "bad timestamps and counts are all named",
			edit: bars(viewResult([]string{"yesterday", "2026-03-14T18:00:00Z", "ES", "1", "one", "1", "EARLY", "0"})),
			want: barsFailed(`ventas_hora_pais row 1: window_start "yesterday": not an RFC 3339 time; pedidos "one": not an integer`),
		},
		{
			name: "an aggregation name that could escape the SQL literal is refused",
			edit: func(s *dashboard.Source) {
				s.Aggregation = "x' OR '1'='1"
				s.Watermarks, s.Stream = nil, nil
			},
			want: dashboard.Snapshot{Aggregation: "x' OR '1'='1", Now: now, Range: lastDay(now), Freshness: dashboard.Freshness{LastFileLoaded: fresh.LastFileLoaded},
				Bars: []dashboard.Bar{}, Countries: []string{}, Discards: noDiscards(now), Files: []dashboard.File{file},
				Errors: map[string]string{
					"bars":      `aggregation name "x' OR '1'='1": want letters, digits and '_'`,
					"discards":  `aggregation name "x' OR '1'='1": want letters, digits and '_'`,
					"stream":    "not configured in this process",
					"watermark": "not configured in this process",
				}},
		},
		{
			name: "discards and countries from the summary query",
			edit: func(s *dashboard.Source) {
				s.Warehouse = &fakeWarehouse{res: viewResult(goodRows[:1]...), summary: summaryResult(goodSummary[1], goodSummary[4], goodSummary[6])}
			},
			want: snap(func(s *dashboard.Snapshot) {
				s.Countries = []string{"ES"}
				s.Discards = dashboard.Discards{Since: now.Add(-24 * time.Hour), TooLate: 1, LatestDeadLetters: []dashboard.Discard{}, LatestTooLate: []dashboard.Discard{
					{PedidoID: "P-5", Reason: "too_late", EventTime: wm.Add(-170 * time.Minute), WindowStart: wm.Add(-3 * time.Hour), ReceivedAt: wm.Add(21 * time.Minute)}}}
			}),
		},
		{
			name: "a failing summary leaves the chart",
			edit: func(s *dashboard.Source) {
				s.Warehouse = &fakeWarehouse{res: viewResult(goodRows[:1]...), summaryErr: errors.New("bigquery: 503")}
			},
			want: snap(func(s *dashboard.Snapshot) {
				s.Errors = map[string]string{"discards": "query pedidos_descartados: bigquery: 503"}
			}),
		},
		{
			name: "a summary row of an unknown kind is an error",
			edit: func(s *dashboard.Source) {
				s.Warehouse = &fakeWarehouse{res: viewResult(goodRows[:1]...), summary: summaryResult([]string{"total", "x", "1", "NULL", "NULL", "NULL", "NULL", "NULL"})}
			},
			want: snap(func(s *dashboard.Snapshot) {
				s.Errors = map[string]string{"discards": `pedidos_descartados row 1: kind "total": want count, row or country`}
			}),
		},
		{
			name: "a failing stream status leaves the rest",
			edit: func(s *dashboard.Source) { s.Stream = fakeStream{err: errors.New("firestore: unavailable")} },
			want: snap(func(s *dashboard.Snapshot) {
				s.OpenWindows, s.Freshness.LastOrderAccepted = nil, nil
				s.Errors = map[string]string{"stream": "read stream status: firestore: unavailable"}
			}),
		},
		{
			name: "a watermark reader that is also the stream status answers both",
			edit: func(s *dashboard.Source) {
				s.Stream = nil
				s.Watermarks = processorLike{fakeWatermark(wm, nil), goodStream}
			},
			want: snap(func(*dashboard.Snapshot) {}),
		},
		{
			name: "quarantine links need the bucket; a base makes them absolute",
			edit: func(s *dashboard.Source) {
				s.QuarantineBucket, s.DownloadBase = "alpinashop-cuarentena", "http://127.0.0.1:8080/"
			},
			want: snap(func(s *dashboard.Snapshot) {
				s.Files[0].QuarantineURL = "http://127.0.0.1:8080/download/storage/v1/b/alpinashop-cuarentena/o/cuarentena%2Flineas_pedido%2F2026%2F03%2F14%2Ffa.csv.rechazos.csv?alt=media"
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := full()
			if tt.edit != nil {
				tt.edit(&src)
			}
			got, _ := getSnapshot(t, dashboard.Handler(src))
			// The declaration's parts and the key picker have their own
			// tests (TestSnapshotOnRealEngines, TestSlidingSnapshot).
			got.Key, got.Window, got.Keys = "", dashboard.WindowDecl{}, nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

// processorLike is one value that is both ports, as *stream.Processor is.
type processorLike struct {
	watermarkFunc
	fakeStream
}

func TestLagUsesProcessingTime(t *testing.T) {
	// now -> the lag in whole seconds
	for now, lag := range map[time.Time]int64{wm.Add(10*time.Minute + 999*time.Millisecond): 600, wm: 0, wm.Add(24 * time.Hour): 86400} {
		src := dashboard.Source{Watermarks: fakeWatermark(wm, nil), Now: func() time.Time { return now }}
		snap := dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
		if diff := cmp.Diff(&dashboard.Watermark{At: wm, LagSeconds: lag}, snap.Watermark); diff != "" {
			t.Errorf("watermark at %s (-want +got):\n%s", now, diff)
		}
	}
}

// TestRoutes: mounted at "/" of the functions framework's mux the handler
// receives every path no function claims, so it answers only its own. The
// page's period is the Source's; unset, 5 minutes, the period for a page
// over BigQuery, where each refresh is billed.
func TestRoutes(t *testing.T) {
	tests := []struct {
		name, method, path string
		refresh            time.Duration // Source.Refresh
		status             int
		contentType        string
		body               string // a substring
	}{
		{name: "page", method: "GET", path: "/", refresh: 1500 * time.Millisecond, status: 200, contentType: "text/html; charset=utf-8", body: `data-refresh-ms="1500"`},
		{name: "page, unset period", method: "GET", path: "/", status: 200, body: `data-refresh-ms="300000"`},
		{name: "page over a free warehouse", method: "GET", path: "/", refresh: dashboard.LocalRefresh, status: 200, body: `data-refresh-ms="5000"`},
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
			dashboard.Handler(dashboard.Source{Refresh: tt.refresh}).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
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
	dashboard.Handler(dashboard.Source{}).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page CSP = %q: want scripts from the handler only", csp)
	}
}

func ptr[T any](v T) *T { return &v }

// getJSON answers GET /api/dashboard?query as generic JSON, so that a
// field the page needs and the API lacks fails as a difference.
func getJSON(t *testing.T, h http.Handler, query string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath+query, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s%s: HTTP %d: %s", dashboard.APIPath, query, rec.Code, rec.Body)
	}
	var m map[string]any
	check(t, json.Unmarshal(rec.Body.Bytes(), &m))
	return m
}

// skuColumns are the SKU view's columns but aggregation.
var skuColumns = []string{"window_start", "window_end", "sku", "importe", "pedidos", "unidades", "timing", "pane_index"}

// TestSlidingSnapshot: on a sliding aggregation (a 1 h window every 15
// minutes, keyed by SKU) the default range is the 24 h up to the end of the
// newest window holding M (the newest event time the stream accepted), not
// processing time, so the sample story of 14 March published with a wall
// clock of December is what the page shows, and the read stays bounded on
// window_start. The page's labels come from the declaration (its key and
// window) and its key picker from the keys present, the largest first.
// The fixed hourly ventas_hora_pais is TestSnapshotOnRealEngines'; before
// any order, TestFilterInQuery's default view.
func TestSlidingSnapshot(t *testing.T) {
	december := time.Date(2026, 12, 2, 7, 34, 0, 0, time.UTC)
	m := time.Date(2026, 3, 14, 18, 5, 0, 0, time.UTC)
	wh := &fakeWarehouse{res: warehouse.Result{Columns: skuColumns, Rows: [][]string{
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "CAL-TREK-42", "10.00", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "EARLY", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "CET-MERINO", "30.00", "1", "1", "EARLY", "0"},
	}}}
	h := dashboard.Handler(dashboard.Source{
		Warehouse:    wh,
		Stream:       fakeStream{st: stream.AggregationStatus{Aggregation: "ventas_sku_hora_movil", Watermark: m.Add(-10 * time.Minute), MaxEventTime: m}},
		Now:          func() time.Time { return december },
		Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"},
	})
	got := getJSON(t, h, "?aggregation=ventas_sku_hora_movil")
	want := map[string]any{
		"range":  map[string]any{"from": "2026-03-13T19:00:00Z", "until": "2026-03-14T19:00:00Z", "last_hours": 24.0, "newest": true},
		"key":    "sku",
		"window": map[string]any{"kind": "sliding", "size_seconds": 3600.0, "period_seconds": 900.0},
		"keys":   []any{"MOCH-40L-AZ", "CET-MERINO", "CAL-TREK-42"},
		"bars":   4,
	}
	gotSome := map[string]any{"range": got["range"], "key": got["key"], "window": got["window"], "keys": got["keys"], "bars": len(got["bars"].([]any))}
	if diff := cmp.Diff(want, gotSome); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if got := params(t, wh, "newest_windows:ventas_sku_hora_movil")["start_time"][0]; got != "2026-03-13T19:00:00Z" {
		t.Errorf("bars read from window_start >= %s, want 2026-03-13T19:00:00Z", got)
	}
}

// TestPageOffersTheAggregations: the page's aggregation control lists the
// names the server passes, the default chosen, and only those.
func TestPageOffersTheAggregations(t *testing.T) {
	tests := []struct {
		name string
		src  dashboard.Source
		want string
	}{
		{
			name: "both declared aggregations, the default chosen",
			src:  dashboard.Source{Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}},
			want: `<select id="f-agg" name="aggregation" data-default="ventas_hora_pais">` +
				`<option value="ventas_hora_pais" selected>ventas_hora_pais</option>` +
				`<option value="ventas_sku_hora_movil">ventas_sku_hora_movil</option></select>`,
		},
		{
			name: "no list: the shown aggregation alone",
			src:  dashboard.Source{},
			want: `<select id="f-agg" name="aggregation" data-default="ventas_hora_pais">` +
				`<option value="ventas_hora_pais" selected>ventas_hora_pais</option></select>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.src.Now = func() time.Time { return now }
			rec := httptest.NewRecorder()
			dashboard.Handler(tt.src).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.PagePath, nil))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("HTTP %d; page lacks\n%s\nin\n%s", rec.Code, tt.want, rec.Body)
			}
		})
	}
}

// TestNoExternalResources: the page works on a laptop with no network and
// leaks nothing to a CDN. Every script, style, font or image reference in
// the served page and assets is relative to the handler, and no time is
// formatted in the browser's zone or 12-hour clock.
func TestNoExternalResources(t *testing.T) {
	h := dashboard.Handler(dashboard.Source{})
	external := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|fetch\(\s*["'](https?:)?//`)
	local := regexp.MustCompile(`toLocale(Time|Date)?String|getHours\(|getDate\(|getMonth\(|getMinutes\(`)
	for _, path := range []string{dashboard.PagePath, dashboard.JSPath, dashboard.CSSPath} {
		t.Run(path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: HTTP %d", path, rec.Code)
			}
			b, _ := io.ReadAll(rec.Body)
			if m := external.Find(b); m != nil {
				t.Errorf("%s references another host: %q", path, m)
			}
			if m := local.Find(b); m != nil {
				t.Errorf("%s formats a time in the browser's zone: %q (the page shows UTC only)", path, m)
			}
		})
	}
}

func TestParseFilter(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		want    dashboard.Filter
		wantErr string
	}{
		{name: "none", query: "", want: dashboard.Filter{}},
		{name: "countries, listed or repeated, upper-cased, sorted, once each", query: "pais=pt,ES&pais=es&pais=",
			want: dashboard.Filter{Paises: []string{"ES", "PT"}}},
		{name: "a range of days", query: "from=2026-03-01&to=2026-03-14", want: dashboard.Filter{From: day(1), To: day(14)}},
		{name: "one side", query: "from=2026-03-14", want: dashboard.Filter{From: day(14)}},
		{name: "a code that could escape the literal", query: "pais=E'", wantErr: `pais: E' is not a two-letter country code such as ES`},
		{name: "a name, not a code", query: "pais=Spain", wantErr: `pais: SPAIN is not a two-letter country code such as ES`},
		{name: "a local time", query: "from=14/03/2026", wantErr: `from: 14/03/2026 is not a date YYYY-MM-DD`},
		{name: "no such month", query: "from=2026-14-03", wantErr: `from: 2026-14-03 is not a date YYYY-MM-DD`},
		{name: "backwards", query: "from=2026-03-14&to=2026-03-01", wantErr: "to: 2026-03-01 is before from 2026-03-14"},
		{name: "too long", query: "from=2026-01-01&to=2026-03-14", wantErr: "to: 2026-01-01 to 2026-03-14 is 73 days, at most 62"},
		{name: "an end past the warehouse's last timestamp", query: "to=9999-12-31", wantErr: "to: 9999-12-31 is outside 0001-01-01 to 9999-12-30, the days a range can hold (the warehouse's timestamps end at 9999-12-31T23:59:59.999999Z)"},
		{name: "a start before the first one", query: "from=0000-12-31", wantErr: "from: 0000-12-31 is outside 0001-01-01 to 9999-12-30, the days a range can hold (the warehouse's timestamps end at 9999-12-31T23:59:59.999999Z)"},
		{name: "the last day a range can hold", query: "from=9999-12-30&to=9999-12-30", want: dashboard.Filter{From: time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC), To: time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dashboard.ParseFilter(q)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				var fe *dashboard.FilterError
				if !errors.As(err, &fe) || !strings.HasPrefix(tt.wantErr, fe.Param+": ") {
					t.Errorf("error %#v does not name its parameter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFilterInQuery: the API's filter reaches the bars read and the
// discard summary as typed parameters (UTC bounds, the countries; the
// DuckDB run is in the engine test), every read bounded below on its
// table's partitioning column, and a bad filter is a 400 that says what is
// wrong.
func TestFilterInQuery(t *testing.T) {
	all := []string{}
	// Without from, the last 24 hours of processing time (now is
	// 2026-03-14T18:22:30Z); the discards always so.
	const dayAgo = "2026-03-13T18:22:30Z"
	const open = "9999-12-31T23:59:59.999999Z"
	// reads are a read's parameters, as text.
	reads := func(agg, maxWindows, anyKey string, keys []string, start, end string) map[string][]string {
		return map[string][]string{"aggregation": {agg}, "max_windows": {maxWindows}, "any_key": {anyKey}, "keys": keys,
			"start_time": {start}, "end_time": {end}}
	}
	summary := func(agg, start, end string) map[string][]string {
		return map[string][]string{"aggregation": {agg}, "max_latest": {"5"}, "since": {dayAgo}, "start_time": {start}, "end_time": {end}}
	}
	tests := []struct {
		name       string
		query      string
		status     int
		want       map[string][]string // the bars read's parameters, as text
		body       string              // a substring of the 400's body
		wantFilter *dashboard.Filter
		wantRange  dashboard.Range
		read       string // the bars read; "" is newest_windows
	}{
		{
			name: "default view: the last 24 hours", query: "", status: 200,
			want:      reads("ventas_hora_pais", "24", "1", all, dayAgo, open),
			wantRange: dashboard.Range{From: now.Add(-24 * time.Hour), LastHours: 24},
		},
		{
			name: "range and countries", query: "?pais=PT,ES&from=2026-03-01&to=2026-03-14", status: 200,
			want:       reads("ventas_hora_pais", "1488", "0", []string{"ES", "PT"}, "2026-03-01T00:00:00Z", "2026-03-15T00:00:00Z"),
			wantFilter: &dashboard.Filter{Paises: []string{"ES", "PT"}, From: day(1), To: day(14)},
			wantRange:  dashboard.Range{From: day(1), Until: ptr(day(15))},
		},
		{
			name: "from alone: from that day on, as the person chose", query: "?from=2026-03-01", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "2026-03-01T00:00:00Z", open),
			wantFilter: &dashboard.Filter{From: day(1)},
			wantRange:  dashboard.Range{From: day(1)},
		},
		{
			name: "to alone: the 62 days that end with it, an explicit range's limit", query: "?to=2026-03-14", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "2026-01-12T00:00:00Z", "2026-03-15T00:00:00Z"),
			wantFilter: &dashboard.Filter{To: day(14)},
			wantRange:  dashboard.Range{From: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), Until: ptr(day(15))},
		},
		{
			name: "the SKU aggregation, read by its own view and key", query: "?aggregation=ventas_sku_hora_movil&key=MOCH-40L-AZ", status: 200,
			read:       "newest_windows:ventas_sku_hora_movil",
			want:       reads("ventas_sku_hora_movil", "96", "0", []string{"MOCH-40L-AZ"}, dayAgo, open),
			wantFilter: &dashboard.Filter{Keys: []string{"MOCH-40L-AZ"}},
			wantRange:  dashboard.Range{From: now.Add(-24 * time.Hour), LastHours: 24},
		},
		{
			name: "a key filter on ventas_hora_pais is a country filter", query: "?key=FR&pais=ES", status: 200,
			want:       reads("ventas_hora_pais", "24", "0", []string{"ES", "FR"}, dayAgo, open),
			wantFilter: &dashboard.Filter{Paises: []string{"ES"}, Keys: []string{"FR"}},
			wantRange:  dashboard.Range{From: now.Add(-24 * time.Hour), LastHours: 24},
		},
		{name: "an unknown aggregation", query: "?aggregation=ventas_2d_pais", status: 400,
			body: `{"param":"aggregation","error":"aggregation: \"ventas_2d_pais\" is not a declared aggregation (want one of ventas_hora_pais, ventas_sku_hora_movil)"}`},
		{name: "an aggregation name that could escape", query: "?aggregation=x%27%20OR%20%271%27%3D%271", status: 400, body: `"param":"aggregation"`},
		{name: "a country filter on the SKU aggregation", query: "?aggregation=ventas_sku_hora_movil&pais=ES", status: 400,
			body: `{"param":"pais","error":"pais: aggregation ventas_sku_hora_movil is keyed by sku, not by country: filter it with key"}`},
		{name: "a key that is no country on ventas_hora_pais", query: "?key=MOCH-40L-AZ", status: 400, body: `"param":"key"`},
		{name: "a bad key", query: "?aggregation=ventas_sku_hora_movil&key=a%27b", status: 400, body: `"param":"key"`},
		{name: "bad day", query: "?to=yesterday", status: 400, body: `{"param":"to","error":"to: yesterday is not a date YYYY-MM-DD"}`},
		{
			name: "to alone near the first day: from the warehouse's first timestamp", query: "?to=0001-01-05", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "0001-01-01T00:00:00Z", "0001-01-06T00:00:00Z"),
			wantFilter: &dashboard.Filter{To: time.Date(1, 1, 5, 0, 0, 0, 0, time.UTC)},
			wantRange:  dashboard.Range{From: warehouse.MinTime, Until: ptr(time.Date(1, 1, 6, 0, 0, 0, 0, time.UTC))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wh := &fakeWarehouse{res: viewResult(goodRows...)}
			h := dashboard.Handler(dashboard.Source{Warehouse: wh, Now: func() time.Time { return now },
				Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath+tt.query, nil))
			if rec.Code != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != http.StatusOK {
				if !strings.Contains(rec.Body.String(), tt.body) {
					t.Errorf("body lacks %q:\n%s", tt.body, rec.Body)
				}
				return
			}
			var snap dashboard.Snapshot
			check(t, json.Unmarshal(rec.Body.Bytes(), &snap))
			if diff := cmp.Diff(tt.wantFilter, snap.Filter); diff != "" {
				t.Errorf("snapshot's filter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRange, snap.Range); diff != "" {
				t.Errorf("snapshot's range (-want +got):\n%s", diff)
			}
			read := tt.read
			if read == "" {
				read = "newest_windows"
			}
			if diff := cmp.Diff(tt.want, params(t, wh, read)); diff != "" {
				t.Errorf("bars read's parameters (-want +got):\n%s", diff)
			}
			// The summary reads the bars' aggregation and range.
			wantSummary := summary(tt.want["aggregation"][0], tt.want["start_time"][0], tt.want["end_time"][0])
			if diff := cmp.Diff(wantSummary, params(t, wh, "discard_summary")); diff != "" {
				t.Errorf("discard summary's parameters (-want +got):\n%s", diff)
			}
		})
	}
}

// params are the parameters of wh's one read called name, as text.
func params(t *testing.T, wh *fakeWarehouse, name string) map[string][]string {
	t.Helper()
	var got map[string][]string
	for _, s := range wh.stmts {
		if s.Name() != name {
			continue
		}
		if got != nil {
			t.Fatalf("two %s reads, want one", name)
		}
		got = map[string][]string{}
		for _, p := range s.Params() {
			got[p.Name] = []string{}
			for _, v := range p.Values {
				got[p.Name] = append(got[p.Name], warehouse.FormatParam(p.Type, v))
			}
		}
	}
	if got == nil {
		t.Fatalf("no %s read", name)
	}
	return got
}

// TestMonitorReadsTheLogContract: the panel's figures come from the lines
// the log-based metrics count (terraform/logging_metrics.tf), written as
// the stream and the ingester write them, on the server's clock.
func TestMonitorReadsTheLogContract(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	var out, all strings.Builder
	// all is the whole log, DEBUG lines too, which a second Monitor reads
	// back as another process's output (ObserveLine).
	both := slog.NewMultiHandler(logging.New(&out, slog.LevelInfo).Handler(), logging.New(&all, slog.LevelDebug).Handler())
	log := slog.New(m.Handler(both)).With("function", "alpipe")
	m2 := dashboard.NewMonitor(func() time.Time { return now })
	feed := func() {
		for line := range strings.SplitSeq(strings.TrimSpace(all.String()), "\n") {
			m2.ObserveLine([]byte(line))
		}
		all.Reset()
	}
	ctx := context.Background()
	const agg = "ventas_hora_pais"
	accepted := func(id string) {
		log.DebugContext(ctx, "order handled", "pedido_id", id, "aggregation", agg, "fate", stream.Accepted)
	}
	accepted("P-1")
	accepted("P-2")
	log.DebugContext(ctx, "order handled", "pedido_id", "P-2", "aggregation", "ventas_sku_hora_movil", "fate", stream.Accepted)
	log.InfoContext(ctx, "order handled", "pedido_id", "P-3", "aggregation", agg, "fate", stream.TooLate)
	log.InfoContext(ctx, "message dead-lettered", "pedido_id", "P-4", "fate", stream.Invalid, "reason", `invalid: importe_total "x" is not a decimal number`, "duplicate", false)
	log.InfoContext(ctx, "message dead-lettered", "pedido_id", "P-4", "fate", stream.Invalid, "reason", `invalid: importe_total "x" is not a decimal number`, "duplicate", true)
	log.WarnContext(ctx, "file done", "state", "DONE", "redelivered", false, "rows_read", int64(10), "rows_quarantined", int64(3), "reason", "")
	log.ErrorContext(ctx, "file rejected", "state", "REJECTED", "redelivered", false, "rows_read", int64(0), "rows_quarantined", int64(0), "reason", "empty object")

	feed()
	now = now.Add(85 * time.Minute) // 18:25: the tick folds the orders of 17:00
	w := time.Date(2026, 3, 14, 18, 15, 0, 0, time.UTC)
	log.InfoContext(ctx, "tick", "aggregation", agg, "busy", false, "watermark", w, "watermark_lag_seconds", now.Sub(w).Seconds())
	feed()
	now = now.Add(2 * time.Minute) // a page read two minutes later

	got := m.Read(agg, now.Add(-24*time.Hour), now)
	ten, twelve := int64(600), int64(720)
	want := []dashboard.MinuteSample{
		{At: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), Accepted: 2, TooLate: 1, DeadLetters: 1},
		{At: time.Date(2026, 3, 14, 18, 25, 0, 0, time.UTC), FreshnessSeconds: &ten, SystemLagSeconds: 85 * 60},
		{At: time.Date(2026, 3, 14, 18, 27, 0, 0, time.UTC), FreshnessSeconds: &twelve},
	}
	if diff := cmp.Diff(want, got.Minutes); diff != "" {
		t.Errorf("minutes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]dashboard.HourSample{{At: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), FilesLoaded: 1, RowsQuarantined: 3}}, got.Hours); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}
	if len(got.Errors) != 1 || got.Errors[0].Text != "file rejected function=alpipe state=REJECTED redelivered=false rows_read=0 rows_quarantined=0 reason=empty object" {
		t.Errorf("errors = %+v, want the one ERROR line with its fields", got.Errors)
	}
	// The same lines read from JSON text give the same panel, but for the
	// error line's time, which the text keeps to the nanosecond.
	fromText := m2.Read(agg, now.Add(-24*time.Hour), now)
	if diff := cmp.Diff(got, fromText, cmpopts.IgnoreFields(dashboard.ErrorLine{}, "Logged")); diff != "" {
		t.Errorf("read from the JSON lines (-direct +text):\n%s", diff)
	}
	if got.Backlog != nil || got.BacklogNote == "" {
		t.Errorf("backlog = %+v, note %q: want none, and the note saying why", got.Backlog, got.BacklogNote)
	}
	// The observer asks for the DEBUG lines, but the log still gets only
	// what its level lets through.
	if strings.Contains(out.String(), `"severity":"DEBUG"`) || !strings.Contains(out.String(), `"message":"tick"`) {
		t.Errorf("log lines passed on:\n%s", out.String())
	}
}

// TestMonitorIsBounded: a server left running keeps MonitorMinutes minutes
// and MonitorErrors lines, the newest.
func TestMonitorIsBounded(t *testing.T) {
	now := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	log := slog.New(m.Handler(slog.DiscardHandler))
	for i := range dashboard.MonitorMinutes + 100 {
		log.Error("tick failed", "error", fmt.Sprint("attempt ", i))
		log.Debug("order handled", "aggregation", "a", "fate", "accepted")
		now = now.Add(time.Minute)
	}
	got := m.Read("a", time.Time{}, now)
	if n := len(got.Minutes); n != dashboard.MonitorMinutes+1 { // and the current minute
		t.Errorf("%d minutes kept, want %d and the current one", n, dashboard.MonitorMinutes)
	}
	if n := len(got.Errors); n != dashboard.MonitorErrors || got.Errors[0].Text != fmt.Sprint("tick failed error=attempt ", dashboard.MonitorMinutes+99) {
		t.Errorf("%d errors kept, the newest %q; want %d, newest first", n, got.Errors[0].Text, dashboard.MonitorErrors)
	}
}

type backlogFunc func(context.Context) (dashboard.Backlog, error)

func (f backlogFunc) Backlog(ctx context.Context) (dashboard.Backlog, error) { return f(ctx) }

// TestMonitorBacklog: where a Pub/Sub tells the backlog, the panel shows
// it instead of the note; where it cannot be read, the page says why.
func TestMonitorBacklog(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	src := dashboard.Source{Monitor: m, Now: func() time.Time { return now },
		Backlog: backlogFunc(func(context.Context) (dashboard.Backlog, error) {
			return dashboard.Backlog{Undelivered: 7, OldestUnackedAgeSeconds: 90}, nil
		})}
	snap := dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
	if snap.Monitor == nil || snap.Monitor.Backlog == nil || *snap.Monitor.Backlog != (dashboard.Backlog{Undelivered: 7, OldestUnackedAgeSeconds: 90}) || snap.Monitor.BacklogNote != "" {
		t.Errorf("monitor = %+v, want the backlog read", snap.Monitor)
	}
	src.Backlog = backlogFunc(func(context.Context) (dashboard.Backlog, error) {
		return dashboard.Backlog{}, fmt.Errorf("emulator down")
	})
	snap = dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
	if got := snap.Errors["backlog"]; got != "read the backlog: emulator down" {
		t.Errorf("errors = %v, want the backlog's", snap.Errors)
	}
}
