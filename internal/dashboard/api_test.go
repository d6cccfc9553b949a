package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// fakeWarehouse answers the bars read with res (or err) and the summary
// read (discard_summary) with summary (or summaryErr); it records each
// statement, so tests can see what was asked.
type fakeWarehouse struct {
	res        warehouse.Result
	err        error
	summary    warehouse.Result
	summaryErr error

	mu    sync.Mutex // the snapshot's two reads run at once
	stmts []warehouse.Statement
}

func (f *fakeWarehouse) Read(_ context.Context, s warehouse.Statement) (warehouse.Result, error) {
	f.mu.Lock()
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
		{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/state/20260314T170000Z_0", WindowStart: wm.Add(-time.Hour), WindowEnd: wm,
			Error: "decode aggregations/ventas_hora_pais/state/20260314T170000Z_0: unexpected end of JSON input", Since: now.Add(-time.Hour)},
		{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/control/fold",
			Error: "aggregations/ventas_hora_pais/control/fold: state layout 9 found, this binary reads layout 3"},
	},
}}

type fakeLedger struct {
	recs []ledger.Record
	err  error
}

func (f fakeLedger) List(context.Context) ([]ledger.Record, error) { return f.recs, f.err }

// fakeWatermark answers the default aggregation's watermark w, or err.
type fakeWatermark struct {
	w   time.Time
	err error
}

func (f fakeWatermark) Watermark(_ context.Context, agg string) (time.Time, error) {
	if agg != dashboard.DefaultAggregation {
		return time.Time{}, errors.New("unexpected aggregation " + agg)
	}
	return f.w, f.err
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

// getSnapshot answers GET /api/dashboard?query, decoded and as sent.
func getSnapshot(t *testing.T, h http.Handler, query string) (dashboard.Snapshot, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath+query, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s%s: HTTP %d: %s", dashboard.APIPath, query, rec.Code, rec.Body)
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
		Watermarks:       fakeWatermark{w: wm},
		Stream:           goodStream,
		Now:              func() time.Time { return now },
		Files:            3,
		Latest:           2,
		QuarantineBucket: "alpinashop-cuarentena",
	})
	_, body := getSnapshot(t, h, "")
	var pretty bytes.Buffer
	check(t, json.Indent(&pretty, body, "", "  "))
	replaytest.Golden(t, "testdata/api.golden.json", pretty.Bytes())
	for _, exact := range []string{`"importe":"0.000000001"`, `"importe":"9223372036.854775807"`, `"importe":"60.05"`} {
		if !bytes.Contains(body, []byte(exact)) {
			t.Errorf("body lacks %s: money must stay an exact string", exact)
		}
	}
	// One query for the bars, one for everything else: a page left open
	// against BigQuery costs two jobs per refresh, whatever the data. Their
	// parameters otherwise: TestFilterInQuery.
	if len(wh.stmts) != 2 {
		t.Fatalf("%d queries per refresh, want 2", len(wh.stmts))
	}
	if got := params(t, wh, "discard_summary")["max_latest"]; !slices.Equal(got, []string{"2"}) {
		t.Errorf("summary read's max_latest = %v, want the 2 newest discards", got)
	}
}

func TestAPI(t *testing.T) {
	full := func() dashboard.Source {
		return dashboard.Source{
			Warehouse:  &fakeWarehouse{res: viewResult(goodRows[:1]...)},
			Ledger:     fakeLedger{recs: records(1)},
			Watermarks: fakeWatermark{w: wm},
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
	}, FailingCells: 2, Failing: []dashboard.FailingWindow{
		{WindowStart: ptr(wm.Add(-time.Hour)), WindowEnd: ptr(wm), Document: "aggregations/ventas_hora_pais/state/20260314T170000Z_0",
			Error: "decode aggregations/ventas_hora_pais/state/20260314T170000Z_0: unexpected end of JSON input", Since: ptr(now.Add(-time.Hour))},
		{Document: "aggregations/ventas_hora_pais/control/fold",
			Error: "aggregations/ventas_hora_pais/control/fold: state layout 9 found, this binary reads layout 3"},
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
				s.Watermarks = fakeWatermark{err: errors.New("deadline exceeded")}
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
			got, _ := getSnapshot(t, dashboard.Handler(src), "")
			// The declaration's parts and the key picker have their own
			// tests (TestSnapshotOnRealEngines, TestSlidingSnapshot).
			got.Key, got.Window, got.Keys = "", dashboard.WindowDecl{}, nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLagUsesProcessingTime(t *testing.T) {
	// now -> the lag in whole seconds
	for now, lag := range map[time.Time]int64{wm.Add(10*time.Minute + 999*time.Millisecond): 600, wm: 0, wm.Add(24 * time.Hour): 86400} {
		src := dashboard.Source{Watermarks: fakeWatermark{w: wm}, Now: func() time.Time { return now }}
		snap := dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
		if diff := cmp.Diff(&dashboard.Watermark{At: wm, LagSeconds: lag}, snap.Watermark); diff != "" {
			t.Errorf("watermark at %s (-want +got):\n%s", now, diff)
		}
	}
}

// TestRoutes: mounted at "/" of the functions framework's mux the handler
// receives every path no function claims, so it answers only its own. The
// page's period is the Source's; unset, 5 minutes, the period for a page
// over BigQuery, where each refresh is billed. The page's aggregation
// control lists the names the server passes, the default chosen, and only
// those. The page works on a laptop with no network and leaks nothing to a
// CDN: every script, style, font or image reference in the page and its
// assets is relative to the handler, and no time is formatted in the
// browser's zone or 12-hour clock.
func TestRoutes(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|fetch\(\s*["'](https?:)?//`)
	local := regexp.MustCompile(`toLocale(Time|Date)?String|getHours\(|getDate\(|getMonth\(|getMinutes\(`)
	const aggControl = `<select id="f-agg" name="aggregation" data-default="ventas_hora_pais">` +
		`<option value="ventas_hora_pais" selected>ventas_hora_pais</option>`
	tests := []struct {
		name, method, path string
		refresh            time.Duration // Source.Refresh
		aggregations       []string      // Source.Aggregations
		status             int
		contentType        string
		body               string // a substring
	}{
		{name: "page, both aggregations, the default chosen", method: "GET", path: "/", status: 200,
			aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}, body: aggControl +
				`<option value="ventas_sku_hora_movil">ventas_sku_hora_movil</option></select>`},
		{name: "page, no list: the shown aggregation alone", method: "GET", path: "/", status: 200,
			body: aggControl + `</select>`},
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
			src := dashboard.Source{Refresh: tt.refresh, Aggregations: tt.aggregations}
			dashboard.Handler(src).ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
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
			if m := external.Find(b); m != nil {
				t.Errorf("%s references another host: %q", tt.path, m)
			}
			if m := local.Find(b); m != nil {
				t.Errorf("%s formats a time in the browser's zone: %q (the page shows UTC only)", tt.path, m)
			}
			csp := rec.Header().Get("Content-Security-Policy")
			if tt.path == "/" && rec.Code == http.StatusOK && !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("page CSP = %q: want scripts from the handler only", csp)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
