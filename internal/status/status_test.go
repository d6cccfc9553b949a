package status

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

const landing = ingesttest.Landing

// morning is when the person asks.
var morning = time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC)

// night writes a night's worth of ledger records and orders into real
// engines (the embedded store, DuckDB, the stream processor) and returns
// the sources a report reads.
func night(t *testing.T) Sources {
	t.Helper()
	// The ingest service's real parts (see ingesttest): the report reads
	// what they hold.
	r := ingesttest.NewParts(t, landing, ingesttest.Quarantine)
	ctx := context.Background()
	at := func(hhmm string) time.Time {
		d, err := time.Parse("2006-01-02 15:04", hhmm)
		if err != nil {
			t.Fatal(err)
		}
		return d.UTC()
	}
	file := func(name string, gen int64, md5 string, start time.Time, finish func(ledger.Record) ledger.Record) {
		t.Helper()
		key := ledger.Key{Bucket: landing, Object: name, Generation: gen}
		c, err := r.Ledger.Claim(ctx, key, md5, "owner-"+name, start)
		if err != nil {
			t.Fatal(err)
		}
		if finish == nil || c.Decision != ledger.Proceed {
			return
		}
		if err := r.Ledger.Finish(ctx, finish(c.Record), start.Add(90*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	done := func(read, loaded int64, rejects map[string]int64) func(ledger.Record) ledger.Record {
		return func(rec ledger.Record) ledger.Record {
			rec.State, rec.Feed = ledger.Done, "lineas_pedido"
			rec.Counts = ledger.Counts{Read: read, Loaded: loaded, Quarantined: read - loaded, Rejects: rejects}
			if read > loaded {
				rec.Quarantine = "cuarentena/lineas_pedido/" + strings.TrimSuffix(rec.Key.Object, ".csv") + ".g1.csv"
			}
			return rec
		}
	}
	outcome := func(state ledger.State, reason string) func(ledger.Record) ledger.Record {
		return func(rec ledger.Record) ledger.Record {
			rec.State, rec.Reason = state, reason
			if state != ledger.Skipped {
				rec.Feed = "lineas_pedido"
			}
			return rec
		}
	}
	file("exportaciones/2026/03/13/pedidos-erp.csv", 1, "md5-old", at("2026-03-14 02:00"), done(140000, 140000, nil))
	file("exportaciones/2026/03/14/pedidos-erp.csv", 1, "md5-a", at("2026-03-15 02:00"), done(150000, 149997, map[string]int64{"fecha:invalid_date": 2, "cantidad:below_min": 1}))
	file("exportaciones/2026/03/14/pedidos-erp-copia.csv", 1, "md5-a", at("2026-03-15 02:05"), nil) // same content: a duplicate
	file("exportaciones/2026/03/14/vacio.csv", 1, "md5-empty", at("2026-03-15 02:10"), outcome(ledger.Rejected, "empty object: no header row"))
	file("exportaciones/2026/03/notas.txt", 1, "", at("2026-03-15 02:15"), outcome(ledger.Skipped, "no contract matches this object name"))
	file("exportaciones/2026/03/14/tarde.csv", 1, "md5-b", at("2026-03-15 03:00"), outcome(ledger.Failed, "load into lineas_pedido: warehouse unavailable"))
	file("exportaciones/2026/03/15/pedidos-erp.csv", 1, "md5-c", at("2026-03-15 07:55"), nil) // still running
	file("exportaciones/2026/03/12/colgado.csv", 1, "md5-d", at("2026-03-13 09:00"), nil)     // a crashed attempt, never redelivered
	// Loaded, but the refresh left a daily sum out of range: DONE with that
	// as its reason, a file to act on while it is recent.
	const overflow = `aggregate ventas_diarias_sku: sums out of range (1), their groups left out: ` +
		`2026-03-14 sku="MOCH-40L-AZ" importe=100000000000000000000000000000.999999999`
	overflowed := outcome(ledger.Done, overflow)
	file("exportaciones/2026/03/14/suma.csv", 1, "md5-e", at("2026-03-15 04:00"), overflowed)
	file("exportaciones/2026/03/01/viejo.csv", 1, "md5-f", at("2026-03-12 04:00"), overflowed) // old

	proc, err := stream.New(r.Store, r.Warehouse, []window.Spec{window.Defaults()}, contract.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(id, body, eventTime string, now time.Time) {
		t.Helper()
		d := order.Delivery{Message: order.Message{Data: []byte(body), Attributes: map[string]string{"momento_evento": eventTime}, MessageID: id, PublishTime: now}}
		if _, err := proc.Handle(ctx, d, now); err != nil {
			t.Fatal(err)
		}
	}
	orderJSON := func(id, country string) string {
		return `{"pedido_id":"` + id + `","pais":"` + country + `","importe_total":"10.00","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"10.00"}]}`
	}
	deliver("m1", orderJSON("P-1", "ES"), "2026-03-15T06:10:00Z", at("2026-03-15 07:30"))
	deliver("m2", orderJSON("P-2", "FR"), "2026-03-15T06:20:00Z", at("2026-03-15 07:31"))
	deliver("m3", orderJSON("P-3", "ES"), "2026-03-15T07:05:00Z", at("2026-03-15 07:32"))
	deliver("m4", `{"pedido_id":"P-4",`, "2026-03-15T07:06:00Z", at("2026-03-15 07:33"))
	deliver("m5", orderJSON("P-5", "ZZ"), "2026-03-15T07:06:00Z", at("2026-03-15 07:34"))
	if _, err := proc.Tick(ctx, at("2026-03-15 07:40")); err != nil {
		t.Fatal(err)
	}
	deliver("m6", orderJSON("P-6", "PT"), "2026-03-15T03:30:00Z", at("2026-03-15 07:45")) // its window closed at 06:00
	return Sources{Ledger: r.Ledger, Warehouse: r.Warehouse, Stream: proc, Now: func() time.Time { return morning }}
}

// TestStatusReport renders the morning report of a night with every kind
// of outcome and compares it with the golden file; the handler serves it.
func TestStatusReport(t *testing.T) {
	src := night(t)
	rep := BuildReport(context.Background(), src, Options{})
	if len(rep.Problems) > 0 {
		t.Fatalf("problems: %v", rep.Problems)
	}
	// The golden text pins the states, rejects, attention (with the lease
	// running and expired), stream and discards; the JSON is the same report.
	replaytest.Golden(t, "testdata/status.golden", []byte(text(t, rep)))
	t.Run("handler", func(t *testing.T) { testHandler(t, src) })
}

// text is rep as WriteText prints it.
func text(t *testing.T, rep Report) string {
	t.Helper()
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// testHandler serves the same report as JSON and as text.
func testHandler(t *testing.T, src Sources) {
	h := Handler(src)
	get := func(query string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+query, nil))
		return rec
	}
	want := BuildReport(context.Background(), src, Options{Since: 12 * time.Hour})
	var got Report
	if err := json.Unmarshal(get("?since=12h").Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON report (-want +got):\n%s", diff)
	}

	tests := []struct {
		name, query string
		status      int
		contains    string
	}{
		{name: "text", query: "?format=text", status: 200, contains: "Files: 7 (DONE 2, DUPLICATE 1, SKIPPED 1, REJECTED 1, FAILED 1, IN_PROGRESS 1)"},
		{name: "fewer files", query: "?format=text&files=2", status: 200, contains: "... and 5 older"},
		{name: "bad since", query: "?since=yesterday", status: 400, contains: "since"},
		{name: "bad files", query: "?files=0", status: 400, contains: "files"},
		{name: "bad format", query: "?format=xml", status: 400, contains: "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(tt.query)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.contains) {
				t.Errorf("HTTP %d %q; want %d containing %q", rec.Code, rec.Body, tt.status, tt.contains)
			}
		})
	}
}

// TestStatusWithoutSources: a process missing a part still answers, and
// says what it could not read.
func TestStatusWithoutSources(t *testing.T) {
	rep := BuildReport(context.Background(), Sources{Now: func() time.Time { return morning }}, Options{})
	want := Report{
		Now: morning, Since: morning.Add(-24 * time.Hour),
		Problems: []string{
			"files: no ledger in this process",
			"stream: no stream processor in this process",
			"discarded: no warehouse in this process",
		},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

// fakeStream answers a fixed status, as a processor whose state holds
// cells the ticks cannot process would.
type fakeStream struct{ status []stream.AggregationStatus }

func (f fakeStream) Status(context.Context, time.Time) ([]stream.AggregationStatus, error) {
	return f.status, nil
}
func (fakeStream) DeadLettersPending(context.Context) (int, error) { return 0, nil }

// TestStatusFailingCells: the status report lists every window the ticks
// cannot process with its extent, since when, the error and the document
// to repair, and says nothing about failing windows when there are none.
func TestStatusFailingCells(t *testing.T) {
	w := time.Date(2026, 3, 15, 6, 0, 0, 0, time.UTC)
	win := stream.FailingWindow{
		Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/state/20260315T060000Z_0",
		WindowStart: w, WindowEnd: w.Add(time.Hour), Since: w.Add(70 * time.Minute),
		Error: "decode window: layout 9 found,\nthis binary reads layouts 1 to 3",
	}
	parked := stream.FailingWindow{
		Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/parked/20260315T070000Z_4",
		WindowStart: w.Add(time.Hour), WindowEnd: w.Add(2 * time.Hour), Since: w.Add(80 * time.Minute),
		Error: "decode parked: layout 9 found",
	}
	doc := stream.FailingWindow{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/state/garbage", Error: "not a state path"}
	tests := []struct {
		name      string
		failing   []stream.FailingWindow
		wantLines string // the report's failing section, "" for none
	}{
		{name: "none", failing: nil, wantLines: ""},
		{name: "one window", failing: []stream.FailingWindow{win}, wantLines: `  failing: 1 window the ticks cannot process (every other window goes on; these are retried at every tick):
    2026-03-15 06:00 to 07:00 UTC since 2026-03-15 07:10 UTC: decode window: layout 9 found, this binary reads layouts 1 to 3
      document aggregations/ventas_hora_pais/state/20260315T060000Z_0
`},
		{name: "a window, a parked part and a document without a window", failing: []stream.FailingWindow{win, parked, doc}, wantLines: `  failing: 3 windows the ticks cannot process (every other window goes on; these are retried at every tick):
    2026-03-15 06:00 to 07:00 UTC since 2026-03-15 07:10 UTC: decode window: layout 9 found, this binary reads layouts 1 to 3
      document aggregations/ventas_hora_pais/state/20260315T060000Z_0
    2026-03-15 07:00 to 08:00 UTC since 2026-03-15 07:20 UTC: decode parked: layout 9 found
      document aggregations/ventas_hora_pais/parked/20260315T070000Z_4
    aggregations/ventas_hora_pais/state/garbage: not a state path
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := Sources{
				Stream: fakeStream{[]stream.AggregationStatus{{Aggregation: "ventas_hora_pais", Failing: tt.failing}}},
				Now:    func() time.Time { return morning },
			}
			got := text(t, BuildReport(context.Background(), src, Options{}))
			_, after, _ := strings.Cut(got, "  open windows: none\n")
			section, _, ok := strings.Cut(after, "\nNot available:")
			if !ok {
				t.Fatalf("report lacks the stream section:\n%s", got)
			}
			if diff := cmp.Diff(tt.wantLines, section); diff != "" {
				t.Errorf("failing section (-want +got):\n%s\nwhole report:\n%s", diff, got)
			}
		})
	}
}

func TestDriftLines(t *testing.T) {
	t0 := time.Date(2026, 3, 20, 2, 0, 0, 0, time.UTC)
	rec := func(feed string, started time.Time, d *ledger.Drift) ledger.Record {
		return ledger.Record{Feed: feed, StartedAt: started, State: ledger.Done, Drift: d}
	}
	recs := []ledger.Record{ // newest first, as the ledger lists them
		rec("lineas_pedido", t0.Add(48*time.Hour), &ledger.Drift{Added: []string{"canal"}}),
		rec("lineas_pedido", t0.Add(24*time.Hour), nil),
		rec("lineas_pedido", t0, &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}),
		rec("opiniones", t0.Add(time.Hour), &ledger.Drift{Added: []string{"canal"}}),
		rec("lineas_pedido", t0.Add(-72*time.Hour), &ledger.Drift{Added: []string{"antigua"}}), // before since
	}
	want := []DriftLine{
		{Feed: "lineas_pedido", Change: "added", Column: "canal", Files: 2, FirstSeen: t0, LastSeen: t0.Add(48 * time.Hour)},
		{Feed: "opiniones", Change: "added", Column: "canal", Files: 1, FirstSeen: t0.Add(time.Hour), LastSeen: t0.Add(time.Hour)},
		{Feed: "lineas_pedido", Change: "missing", Column: "cliente_id", Files: 1, FirstSeen: t0, LastSeen: t0},
	}
	if diff := cmp.Diff(want, driftLines(recs, t0.Add(-time.Hour))); diff != "" {
		t.Errorf("drift lines (-want +got):\n%s", diff)
	}
	if got := driftLines(recs[1:2], t0); got != nil {
		t.Errorf("no drift gives %v, want nil (omitted from the JSON)", got)
	}
}

// TestOpenWindowsWording: one window reads in the singular; "none" and
// "2 (3 keys in all)" are pinned by TestStatusFailingCells and the golden.
func TestOpenWindowsWording(t *testing.T) {
	if got := openWindows(1, 1); got != "1 (1 key)" {
		t.Errorf("openWindows(1, 1) = %q, want %q", got, "1 (1 key)")
	}
}
