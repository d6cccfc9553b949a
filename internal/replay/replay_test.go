package replay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/window"
)

// history is a small orders file in the format of `alpipe publish`: out of
// event-time order, with a duplicate, invalid orders, a story's tick and
// arrival times (both ignored), and an order outside the replayed dates.
const history = `
{"momento_evento": "2026-03-14T10:05:00Z", "pedido": {"pedido_id": "P-1", "cliente_id": "C-1", "pais": "ES", "importe_total": "179.80", "lineas": [{"sku": "MOCH-40L-AZ", "cantidad": 2, "precio_unitario": "89.90"}]}}
{"momento_evento": "2026-03-14T10:59:59.999Z", "pedido_id": "P-2", "cliente_id": "C-2", "pais": "es", "importe_total": "0.10", "lineas": [{"sku": "X", "cantidad": 1, "precio_unitario": "0.10"}]}
{"tick": "2026-03-14T11:00:00Z"}
{"momento_evento": "2026-03-14T11:00:00+01:00", "pedido_id": "P-3", "pais": "FR", "importe_total": "0.20", "lineas": [{"sku": "X", "cantidad": 4, "precio_unitario": "0.05"}]}
{"momento_evento": "2026-03-14T09:30:00Z", "llegada": "2026-03-14T13:00:00Z", "nota": "on the metro", "pedido": {"pedido_id": "P-4", "pais": "ES", "importe_total": "50.00", "lineas": [{"sku": "X", "cantidad": 3, "precio_unitario": "10"}, {"sku": "Y", "cantidad": 1, "precio_unitario": "20"}]}}
{"momento_evento": "2026-03-14T10:20:00Z", "pedido": {"pedido_id": "P-1", "pais": "ES", "importe_total": "999", "lineas": []}}

{"momento_evento": "2026-03-14T10:20:00Z", "pedido": {"pedido_id": "P-5", "pais": "XX", "importe_total": "1", "lineas": []}}
{"pedido": {"pedido_id": "P-6", "pais": "ES", "importe_total": "1", "lineas": []}}
{"momento_evento": "2026-03-16T08:00:00Z", "pedido": {"pedido_id": "P-7", "pais": "PT", "importe_total": "7", "lineas": []}}
{"momento_evento": "2026-03-15T23:59:59Z", "pedido": {"pedido_id": "P-8", "pais": "DE", "importe_total": "12345678.123456789", "lineas": [{"sku": "Z", "cantidad": 9, "precio_unitario": "1"}]}}
`

// historyPanes are the exact sums of history's windows on 2026-03-14..15,
// worked out by hand: one ON_TIME pane each.
var historyPanes = [][]string{
	{"ventas_hora_pais", "2026-03-14T09:00:00Z", "2026-03-14T10:00:00Z", "ES", "50", "1", "4", "0", "ON_TIME", "ACCUMULATING"},
	{"ventas_hora_pais", "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z", "ES", "179.9", "2", "3", "0", "ON_TIME", "ACCUMULATING"},
	{"ventas_hora_pais", "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z", "FR", "0.2", "1", "4", "0", "ON_TIME", "ACCUMULATING"},
	{"ventas_hora_pais", "2026-03-15T23:00:00Z", "2026-03-16T00:00:00Z", "DE", "12345678.123456789", "1", "9", "0", "ON_TIME", "ACCUMULATING"},
}

func TestReplayJSONL(t *testing.T) {
	ctx := context.Background()
	w := openWarehouse(t)
	opts := options(t)
	opts.Dates, _ = ParseDates("2026-03-14..2026-03-15") // the report's Dates says if it failed

	rep, err := Run(ctx, w, NewJSONL(strings.NewReader(history)), "history", opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := Report{
		Source: "history", Dates: "2026-03-14..2026-03-15", Started: replayStart,
		Read: 9, Skipped: 1, Accepted: 5, Duplicates: 1, Invalid: 2,
		InvalidSamples: []Sample{
			{ID: "line 9", Reason: `invalid: pais "XX" is not an ISO 3166-1 alpha-2 code`},
			{ID: "line 10", Reason: "invalid: missing attribute momento_evento"},
		},
		Segments: 1, Windows: 4, Written: 4,
		// Orders handled at start - I, final tick at start: W = start - D.
		Watermark: replayStart.Add(-10 * time.Minute), EmittedAt: replayStart,
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(historyPanes, query(t, w, panesQuery)); diff != "" {
		t.Errorf("panes (-want +got):\n%s", diff)
	}
	got := query(t, w, "SELECT DISTINCT watermark, emitted_at FROM ventas_hora_pais_paneles")
	if diff := cmp.Diff([][]string{{"2026-03-20T08:50:00Z", "2026-03-20T09:00:00Z"}}, got); diff != "" {
		t.Errorf("watermark and emission time (-want +got):\n%s", diff)
	}
	if n := query(t, w, "SELECT COUNT(*) FROM pedidos_descartados")[0][0]; n != "0" {
		t.Errorf("pedidos_descartados has %s rows, want none: a replay records no live drops", n)
	}

	rerun(t, w, NewJSONL(strings.NewReader(history)), opts, historyPanes)
}

// rerun replays src again: it adds nothing, and the panes stay want.
func rerun(t *testing.T, w *duckdb.Warehouse, src Source, opts Options, want [][]string) {
	t.Helper()
	again, err := Run(context.Background(), w, src, "again", opts)
	if err != nil {
		t.Fatalf("Run again: %v", err)
	}
	if again.Written != 0 || again.Unchanged != int64(len(want)) || !again.OK() {
		t.Errorf("re-run wrote %d, found %d unchanged and %d conflicts; want 0, %d, 0",
			again.Written, again.Unchanged, again.Conflicts, len(want))
	}
	if diff := cmp.Diff(want, query(t, w, panesQuery)); diff != "" {
		t.Errorf("panes after the re-run (-want +got):\n%s", diff)
	}
}

func TestReplayRefusesWindowsWithOtherPanes(t *testing.T) {
	ctx := context.Background()
	w := openWarehouse(t)
	// A live EARLY pane of the FR window, and an earlier replay of the DE
	// window with other figures.
	live := window.Pane{Aggregation: "ventas_hora_pais", Key: "FR", WindowStart: at("2026-03-14T10:00:00Z"), WindowEnd: at("2026-03-14T11:00:00Z"),
		Timing: window.TimingEarly, Accumulation: window.Accumulating, Measures: window.Measures{Importe: dec(t, "0.15"), Pedidos: 1, Unidades: 3}}
	old := window.Pane{Aggregation: "ventas_hora_pais", Key: "DE", WindowStart: at("2026-03-15T23:00:00Z"), WindowEnd: at("2026-03-16T00:00:00Z"),
		Timing: window.TimingOnTime, Accumulation: window.Accumulating, Measures: window.Measures{Importe: dec(t, "1"), Pedidos: 1, Unidades: 1}}
	replaytest.AppendPanes(t, w, live, old)

	rep, err := Run(ctx, w, NewJSONL(strings.NewReader(history)), "history", options(t))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantConflicts := []Conflict{
		{Aggregation: "ventas_hora_pais", WindowStart: old.WindowStart, Key: "DE", Replay: window.Measures{Importe: dec(t, "12345678.123456789"), Pedidos: 1, Unidades: 9},
			Existing: 1, Latest: "ON_TIME #0 1.00/1/1"},
		{Aggregation: "ventas_hora_pais", WindowStart: live.WindowStart, Key: "FR", Replay: window.Measures{Importe: dec(t, "0.2"), Pedidos: 1, Unidades: 4},
			Existing: 1, Latest: "EARLY #0 0.15/1/3"},
	}
	sortConflicts := cmpopts.SortSlices(func(a, b Conflict) bool { return a.Key < b.Key })
	if diff := cmp.Diff(wantConflicts, rep.ConflictSamples, sortConflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	if rep.OK() || rep.Conflicts != 2 || rep.Written != 3 || rep.Windows != 5 {
		t.Errorf("OK=%v conflicts=%d written=%d windows=%d; want false, 2, 3, 5", rep.OK(), rep.Conflicts, rep.Written, rep.Windows)
	}
	golden(t, "testdata/refused.golden", []byte(text(t, rep)))
	got := query(t, w, "SELECT pais, importe, timing FROM ventas_hora_pais_paneles WHERE pais IN ('FR', 'DE') ORDER BY pais")
	if diff := cmp.Diff([][]string{{"DE", "1", "ON_TIME"}, {"FR", "0.15", "EARLY"}}, got); diff != "" {
		t.Errorf("refused windows changed (-want +got):\n%s", diff)
	}
}

// TestReplayFromTable replays two dates of lineas_pedido: the replayed
// panes, at noon of each date, are the batch figures exactly (reconcile's
// TestRun sums the windows starting in a date).
func TestReplayFromTable(t *testing.T) {
	ctx := context.Background()
	const obj = "gs://alpinashop-catalogo/exportaciones/2026/03/15/pedidos.csv"
	// ventas_hora_pais with two-day windows: the embedded warehouse holds
	// only the declared aggregations' panes tables, and the SKU one cannot
	// stand in (the table source replays an order as one summary line, with
	// no SKU or price). A window holding both dates keeps them in one
	// segment.
	two := window.Defaults()
	two.WindowSize = 48 * time.Hour
	tests := []struct {
		name         string
		specs        []window.Spec
		wantSegments int
		wantPanes    [][]string
	}{
		{
			name:         "hourly windows: one segment per date, panes at noon",
			specs:        []window.Spec{window.Defaults()},
			wantSegments: 2,
			wantPanes: [][]string{
				{"ventas_hora_pais", "2026-03-14T12:00:00Z", "2026-03-14T13:00:00Z", "ES", "239.8", "2", "4", "0", "ON_TIME", "ACCUMULATING"},
				{"ventas_hora_pais", "2026-03-14T12:00:00Z", "2026-03-14T13:00:00Z", "FR", "39.9", "1", "3", "0", "ON_TIME", "ACCUMULATING"},
				{"ventas_hora_pais", "2026-03-15T12:00:00Z", "2026-03-15T13:00:00Z", "ES", "7.5", "1", "1", "0", "ON_TIME", "ACCUMULATING"},
			},
		},
		{
			name:         "a window spanning both dates keeps them in one segment",
			specs:        []window.Spec{two},
			wantSegments: 1,
			wantPanes: [][]string{
				{"ventas_hora_pais", "2026-03-14T00:00:00Z", "2026-03-16T00:00:00Z", "ES", "247.3", "3", "5", "0", "ON_TIME", "ACCUMULATING"},
				{"ventas_hora_pais", "2026-03-14T00:00:00Z", "2026-03-16T00:00:00Z", "FR", "39.9", "1", "3", "0", "ON_TIME", "ACCUMULATING"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openWarehouse(t)
			// Generation 1 is superseded by the corrected generation 2.
			loadLines(t, w, obj, 1, line{"P-1", "ES", "2026-03-14", 2, "99.90"})
			loadLines(t, w, obj, 2,
				line{"P-1", "ES", "2026-03-14", 2, "89.90"}, line{"P-1", "ES", "2026-03-14", 1, "10"},
				line{"P-2", "ES", "2026-03-14", 1, "50"},
				line{"P-3", "FR", "2026-03-14", 3, "13.30"},
				line{"P-9", "ES", "2026-03-14", 1, "1"}, line{"P-9", "PT", "2026-03-14", 1, "1"}, // two countries: invalid
				// The first order of 2026-03-15 is invalid too: the date's cut
				// carries over to P-6.
				line{"P-5", "ES", "2026-03-15", 1, "2"}, line{"P-5", "IT", "2026-03-15", 1, "2"},
				line{"P-6", "ES", "2026-03-15", 1, "7.5"},
				line{"P-0", "ES", "2026-03-13", 1, "1000"}, // outside the dates
			)
			opts := options(t, tt.specs...)
			opts.Dates, _ = ParseDates("2026-03-14..2026-03-15") // else P-0 of the 13th shows
			rep, err := Run(ctx, w, NewTable(w, opts.Dates), SourceTable, opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Segments != tt.wantSegments || rep.Accepted != 4 || rep.Invalid != 2 || !rep.OK() {
				t.Errorf("segments=%d accepted=%d invalid=%d OK=%v; want %d, 4, 2, true",
					rep.Segments, rep.Accepted, rep.Invalid, rep.OK(), tt.wantSegments)
			}
			if diff := cmp.Diff(tt.wantPanes, query(t, w, panesQuery)); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			rerun(t, w, NewTable(w, opts.Dates), opts, tt.wantPanes)
		})
	}
}

// TestReplayFromTableLeavesOutSKUKeys: the table source replays an order as
// one summary line (no SKU, no price), so an aggregation keyed by sku is
// left out and said so, rather than written with a "*" key and no amount;
// the JSONL source keeps the lines and replays it.
func TestReplayFromTableLeavesOutSKUKeys(t *testing.T) {
	ctx := context.Background()
	sku := window.Defaults()
	sku.Name, sku.KeyField = "ventas_sku_hora_movil", "sku"
	const skuPanes = "SELECT aggregation, sku, importe, pedidos, unidades FROM ventas_sku_hora_movil_paneles ORDER BY window_start, sku"
	table := func(w Warehouse, o Options) Source { return NewTable(w, o.Dates) }
	jsonl := func(Warehouse, Options) Source { return NewJSONL(strings.NewReader(history)) }
	tests := []struct {
		name            string
		source          func(w Warehouse, opts Options) Source
		wantNotReplayed []string
		wantSKUPanes    int
	}{
		{name: "table: left out", source: table, wantNotReplayed: []string{"ventas_sku_hora_movil"}},
		{name: "JSONL: replayed", source: jsonl, wantSKUPanes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openWarehouse(t)
			loadLines(t, w, "gs://b/o.csv", 1, line{"P-1", "ES", "2026-03-14", 2, "89.90"})
			opts := options(t, window.Defaults(), sku)
			opts.Dates, _ = ParseDates("2026-03-14")
			rep, err := Run(ctx, w, tt.source(w, opts), "test", opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tt.wantNotReplayed, rep.NotReplayed); diff != "" {
				t.Errorf("not replayed (-want +got):\n%s", diff)
			}
			got := query(t, w, skuPanes)
			if len(got) < tt.wantSKUPanes || (tt.wantSKUPanes == 0 && len(got) != 0) {
				t.Errorf("SKU panes %q, want %d or more", got, tt.wantSKUPanes)
			}
			for _, r := range got {
				if r[1] == "*" || r[2] == "0" {
					t.Errorf("SKU pane %q: a summary line's key or amount", r)
				}
			}
			out := text(t, rep)
			if said := strings.Contains(out, "not replayed"); said != (len(tt.wantNotReplayed) > 0) {
				t.Errorf("report says not replayed: %t, want %t:\n%s", said, len(tt.wantNotReplayed) > 0, out)
			}
		})
	}
}

// TestRunRefuses: options Run cannot replay with, a source whose cut is
// not kept (a later order in a closed segment's window would give that
// window a second pane 0), and a bad line, which writes nothing (one
// segment, closed only at the end).
func TestRunRefuses(t *testing.T) {
	bad := window.Defaults()
	bad.IdleTimeout = 0
	brokenCut := []Message{
		jsonMsg("P-1", "2026-03-14T10:00:00Z", false),
		jsonMsg("P-2", "2026-03-14T12:00:00Z", true),
		jsonMsg("P-3", "2026-03-14T10:30:00Z", false),
	}
	for _, tt := range []struct {
		name    string
		opts    Options
		src     Source
		wantErr string
		panes   int // written before the refusal
	}{
		{name: "no aggregation", src: &slice{}, wantErr: "no aggregation configured"},
		{name: "no clock", opts: Options{Specs: []window.Spec{window.Defaults()}}, src: &slice{},
			wantErr: "no clock"},
		{name: "invalid spec", opts: Options{Specs: []window.Spec{bad}}, src: &slice{},
			wantErr: "idle timeout 0s must be positive"},
		{name: "a cut not kept", opts: options(t), src: &slice{msgs: brokenCut},
			wantErr: "closed segment", panes: 1},
		{name: "a bad line", opts: options(t), src: NewJSONL(strings.NewReader(history + "{not json\n")),
			wantErr: "line 13"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := openWarehouse(t)
			_, err := Run(context.Background(), w, tt.src, "x", tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Run error = %v, want one containing %q", err, tt.wantErr)
			}
			if n := len(query(t, w, panesQuery)); n != tt.panes {
				t.Errorf("%d panes written, want %d", n, tt.panes)
			}
		})
	}
}

// text is rep as WriteText prints it.
func text(t *testing.T, rep Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type slice struct {
	msgs []Message
	i    int
}

func (s *slice) Next(context.Context) (Message, error) {
	if s.i >= len(s.msgs) {
		return Message{}, io.EOF
	}
	s.i++
	return s.msgs[s.i-1], nil
}

func jsonMsg(id, eventTime string, cut bool) Message {
	return Message{
		ID:         id,
		Data:       []byte(`{"pedido_id": "` + id + `", "pais": "ES", "importe_total": "1", "lineas": []}`),
		Attributes: map[string]string{"momento_evento": eventTime},
		Cut:        cut,
	}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseDates(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "empty is every date", in: "", want: ""},
		{name: "one date", in: "2026-03-14", want: "2026-03-14..2026-03-14"},
		{name: "range", in: " 2026-02-27..2026-03-02 ", want: "2026-02-27..2026-03-02"},
		{name: "backwards", in: "2026-03-02..2026-02-27", wantErr: true},
		{name: "not a date", in: "14/03/2026", wantErr: true},
		{name: "open range", in: "2026-03-02..", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDates(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseDates(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, d.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	d, _ := ParseDates("2026-03-14..2026-03-15")
	for _, c := range []struct {
		t    string
		want bool
	}{
		{"2026-03-13T23:59:59.999Z", false}, {"2026-03-14T00:00:00Z", true},
		{"2026-03-16T00:30:00+01:00", true}, {"2026-03-16T00:00:00Z", false},
	} {
		if got := d.Contains(at(c.t)); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestJSONLReadsThePublishFormat(t *testing.T) {
	in := `{"momento_evento": "2026-03-14T18:42:00+01:00", "pedido": {"pedido_id": "P-1", "pais": "ES"}, "llegada": "2026-03-14T19:00:00Z", "nota": "story"}

{"tick": "2026-03-14T19:00:00Z"}
{"momento_evento": "2026-03-14T18:43:00Z", "pedido_id": "P-2", "pais": "FR", "llegada": "2026-03-14T18:50:00Z", "nota": "flat"}
{"pedido_id": "P-3"}
`
	j := NewJSONL(strings.NewReader(in))
	var got []Message
	for {
		m, err := j.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, m)
	}
	want := []Message{
		{ID: "line 1", Data: []byte(`{"pedido_id": "P-1", "pais": "ES"}`), Attributes: map[string]string{"momento_evento": "2026-03-14T18:42:00+01:00"}},
		{ID: "line 4", Data: []byte(`{"pais":"FR","pedido_id":"P-2"}`), Attributes: map[string]string{"momento_evento": "2026-03-14T18:43:00Z"}},
		{ID: "line 5", Data: []byte(`{"pedido_id":"P-3"}`), Attributes: map[string]string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestHandler(t *testing.T) {
	w := openWarehouse(t)
	h := NewHandler(w, options(t))
	serve := func(t *testing.T, method, target, body string) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", ContentType)
		h.ServeHTTP(rec, req)
		return rec
	}
	tests := []struct {
		name        string
		get         bool // else POST
		target      string
		body        string
		wantCode    int
		wantWritten int64
	}{
		{name: "GET is refused", get: true, target: "/_local/replay", wantCode: 405},
		{name: "orders JSONL", target: "/_local/replay?dates=2026-03-14..2026-03-15", body: history, wantCode: http.StatusOK, wantWritten: 4},
		{name: "lineas_pedido (empty)", target: "/_local/replay?source=lineas_pedido", wantCode: http.StatusOK},
		{name: "bad dates", target: "/_local/replay?dates=yesterday", wantCode: http.StatusBadRequest},
		{name: "bad source", target: "/_local/replay?source=bigtable", wantCode: http.StatusBadRequest},
		{name: "bad line", target: "/_local/replay", body: "[1, 2]\n", wantCode: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.get {
				method = http.MethodGet
			}
			rec := serve(t, method, tt.target, tt.body)
			if rec.Code != tt.wantCode {
				t.Fatalf("HTTP %d %s, want %d", rec.Code, rec.Body, tt.wantCode)
			}
			if rec.Code != http.StatusOK {
				return
			}
			var rep Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatalf("decode report: %v", err)
			}
			if rep.Written != tt.wantWritten || !rep.Started.Equal(replayStart) {
				t.Errorf("report wrote %d panes, started %s; want %d, %s", rep.Written, rep.Started, tt.wantWritten, replayStart.Format(time.RFC3339))
			}
		})
	}
	t.Run("one replay at a time", func(t *testing.T) {
		h.busy.Lock()
		defer h.busy.Unlock()
		if rec := serve(t, http.MethodPost, "/_local/replay", history); rec.Code != http.StatusConflict {
			t.Errorf("HTTP %d while another replay runs, want 409", rec.Code)
		}
	})
}

// replayStart is the processing time tests start replays at.
var replayStart = time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)

func options(t testing.TB, specs ...window.Spec) Options {
	if len(specs) == 0 {
		specs = []window.Spec{window.Defaults()}
	}
	return Options{
		Specs: specs, IsCountry: contract.IsCountry, TempDir: t.TempDir(),
		Now: func() time.Time { return replayStart },
	}
}

// panesQuery lists the panes table in a stable order, without emitted_at
// and watermark, which the replay's clock decides.
const panesQuery = "SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, pane_index, timing, accumulation " +
	"FROM ventas_hora_pais_paneles ORDER BY aggregation, window_start, pais, pane_index"

// The fixtures are shared with reconcile's tests (see replaytest).
var (
	openWarehouse = replaytest.OpenWarehouse
	loadLines     = replaytest.LoadLines[line]
	dec           = replaytest.Dec
	golden        = replaytest.Golden
	query         = ingesttest.Query
)

// line is one lineas_pedido row of a fixture: pedido, pais, fecha,
// cantidad, precio.
type line replaytest.Line
