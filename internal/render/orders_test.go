package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestTick: a tick's line (`alpipe tick`, the demo) counts in words that
// agree with the number, with separators; it says how many cells failed and
// lists each with its error on one line; a healthy tick says nothing of
// failing cells, so it prints exactly what it did before they existed.
func TestTick(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 25, 0, 0, time.UTC)
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	cell := stream.FailingCell{Path: "streams/ventas_hora_pais/windows/20260314T170000Z_pt", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Key: "pt", Since: now.Add(-time.Minute), Error: "add up: importe overflows"}
	es := stream.FailingCell{Path: "streams/ventas_hora_pais/windows/20260314T170000Z_es", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Key: "es", Since: now.Add(-5 * time.Minute), Error: "decode: layout 9 found,\n this binary reads layout 1"}
	doc := stream.FailingCell{Path: "streams/ventas_hora_pais/deltas/garbage", Error: "not a delta path"}
	tests := []struct {
		name string
		tick stream.AggregationTick
		want string
	}{
		{name: "healthy", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1200},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1,200 windows expired\n"},
		{name: "failing", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1, Failing: []stream.FailingCell{cell}, FailingCells: 2},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1 window expired, 2 cells failing (retried at every tick)\n" +
				"         failing PT 17:00-18:00 (streams/ventas_hora_pais/windows/20260314T170000Z_pt) since 2026-03-14 17:24:00: add up: importe overflows\n" +
				"         ... and 1 more failing cell\n"},
		{name: "one of each", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1, Failing: []stream.FailingCell{es}, FailingCells: 1},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1 window expired, 1 cell failing (retried at every tick)\n" +
				"         failing ES 17:00-18:00 (streams/ventas_hora_pais/windows/20260314T170000Z_es) since 2026-03-14 17:20:00: decode: layout 9 found, this binary reads layout 1\n"},
		{name: "more failing than reported", tick: stream.AggregationTick{Failing: []stream.FailingCell{es, doc}, FailingCells: 5},
			want: "17:25:00 tick: watermark -inf, 0 panes, 0 windows expired, 5 cells failing (retried at every tick)\n" +
				"         failing ES 17:00-18:00 (streams/ventas_hora_pais/windows/20260314T170000Z_es) since 2026-03-14 17:20:00: decode: layout 9 found, this binary reads layout 1\n" +
				"         failing streams/ventas_hora_pais/deltas/garbage: not a delta path\n" +
				"         ... and 3 more failing cells\n"},
		{name: "busy", tick: stream.AggregationTick{Busy: true},
			want: "17:25:00 tick: another tick holds the lease; nothing done\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Tick(&b, stream.TickResult{Now: now, Aggregations: []stream.AggregationTick{tt.tick}})
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("Tick (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOrderLine: an order's line names its window in every aggregation,
// and the panes it emitted follow on lines of their own.
func TestOrderLine(t *testing.T) {
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	win := window.Window{Start: w, End: w.Add(time.Hour)}
	pane := window.Pane{Key: "es", WindowStart: w, WindowEnd: w.Add(time.Hour), Index: 2, Timing: window.TimingLate,
		Measures: window.Measures{Importe: numeric.FromNanos(329_650_000_000), Pedidos: 3, Unidades: 4}}
	tests := []struct {
		name string
		res  stream.Result
		want string
	}{
		{name: "one aggregation", res: stream.Result{PedidoID: "P-1", Aggregations: []stream.Outcome{{Fate: stream.Accepted, Window: win, Key: "ES"}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES)"},
		{name: "two aggregations, a pane in the first", res: stream.Result{PedidoID: "P-1", Aggregations: []stream.Outcome{
			{Fate: stream.Accepted, Window: win, Key: "ES", Panes: []window.Pane{pane}}, {Fate: stream.Accepted, Window: win, Key: "FRONTAL-LED"}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES) (window 17:00-18:00 FRONTAL-LED)\n" +
				"         pane ES 17:00-18:00 #2 LATE    importe=329.65 pedidos=3 unidades=4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, OrderLine(tt.res, "2026-03-14T18:02:00+01:00")); diff != "" {
				t.Errorf("OrderLine (-want +got):\n%s", diff)
			}
		})
	}
}
