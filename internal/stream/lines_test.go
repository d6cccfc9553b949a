package stream

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestTick: a tick's line (`alpipe tick`, the demo) counts in words that
// agree with the number, with separators; it says how many windows failed
// and lists each with its error on one line (a window by its extent and
// state document, else the document); a healthy tick says nothing of them.
// With several aggregations each tick line names its aggregation (a busy one
// too), and each pane line follows its own.
func TestTick(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 25, 0, 0, time.UTC)
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	cell := FailingWindow{Path: "aggregations/ventas_hora_pais/state/20260314T170000Z_0", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Since: now.Add(-time.Minute), Error: "add up: importe overflows"}
	es := FailingWindow{Path: "aggregations/ventas_hora_pais/parked/20260314T170000Z_4", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Since: now.Add(-5 * time.Minute), Error: "decode: layout 9 found,\n this binary reads layout 3"}
	doc := FailingWindow{Path: "aggregations/ventas_hora_pais/control/fold", Error: "not a fold"}
	pane := func(key string, start time.Time) window.Pane {
		return window.Pane{Key: key, WindowStart: start, WindowEnd: start.Add(time.Hour), Timing: window.TimingEarly,
			Measures: window.Measures{Importe: numeric.FromNanos(89_900_000_000), Pedidos: 1, Unidades: 1}}
	}
	tests := []struct {
		name  string
		ticks []AggregationTick
		want  string
	}{
		{"healthy", []AggregationTick{{Watermark: now.Add(-10 * time.Minute), Expired: 1200}},
			"17:25:00 tick: watermark 17:15, 0 panes, 1,200 windows expired\n"},
		{"failing", []AggregationTick{{Watermark: now.Add(-10 * time.Minute), Expired: 1,
			Failing: []FailingWindow{cell}, FailingCells: 2}},
			"17:25:00 tick: watermark 17:15, 0 panes, 1 window expired, 2 windows failing (retried at every tick)\n" +
				"         failing 17:00-18:00 (aggregations/ventas_hora_pais/state/20260314T170000Z_0) since 2026-03-14 17:24 UTC: add up: importe overflows\n" +
				"         ... and 1 more failing window\n"},
		{"more failing than reported, one without a window",
			[]AggregationTick{{Failing: []FailingWindow{es, doc}, FailingCells: 5}},
			"17:25:00 tick: watermark -inf, 0 panes, 0 windows expired, 5 windows failing (retried at every tick)\n" +
				"         failing 17:00-18:00 (aggregations/ventas_hora_pais/parked/20260314T170000Z_4) since 2026-03-14 17:20 UTC: decode: layout 9 found, this binary reads layout 3\n" +
				"         failing aggregations/ventas_hora_pais/control/fold: not a fold\n" +
				"         ... and 3 more failing windows\n"},
		{"a pane's measures read as query results do", []AggregationTick{{Panes: []window.Pane{{Key: "fr",
			Measures: window.Measures{Importe: numeric.FromNanos(65400000000), Pedidos: 2, Unidades: 1500},
		}}}},
			"17:25:00 tick: watermark -inf, 1 pane, 0 windows expired\n" +
				"         pane FR -inf--inf #0         importe=65.40 pedidos=2 unidades=1,500\n"},
		{"busy", []AggregationTick{{Busy: true}},
			"17:25:00 tick: another tick holds the lease; nothing done\n"},
		{"both ran", []AggregationTick{
			{Aggregation: "ventas_hora_pais", Watermark: now.Add(-30 * time.Minute),
				Panes: []window.Pane{pane("es", w)}},
			{Aggregation: "ventas_sku_hora_movil", Watermark: now.Add(-30 * time.Minute), Expired: 2,
				Panes: []window.Pane{pane("MOCH-40L-AZ", w.Add(-15*time.Minute)), pane("MOCH-40L-AZ", w)}}},
			"17:25:00 tick ventas_hora_pais: watermark 16:55, 1 pane, 0 windows expired\n" +
				"         pane ES 17:00-18:00 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n" +
				"17:25:00 tick ventas_sku_hora_movil: watermark 16:55, 2 panes, 2 windows expired\n" +
				"         pane MOCH-40L-AZ 16:45-17:45 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n" +
				"         pane MOCH-40L-AZ 17:00-18:00 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n"},
		{"one busy", []AggregationTick{{Aggregation: "ventas_hora_pais", Busy: true},
			{Aggregation: "ventas_sku_hora_movil"}},
			"17:25:00 tick ventas_hora_pais: another tick holds the lease; nothing done\n" +
				"17:25:00 tick ventas_sku_hora_movil: watermark -inf, 0 panes, 0 windows expired\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteTick(&b, TickResult{Now: now, Aggregations: tt.ticks})
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("WriteTick (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOrderLine: an order's line says its fate and window in the first
// aggregation; every other aggregation has a line of its own naming it,
// with the order's fate there and its windows by key (those too late
// apart). An order writes no pane: panes come with the tick.
func TestOrderLine(t *testing.T) {
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	win := window.Window{Start: w, End: w.Add(time.Hour)}
	// slide is the sliding window (1 h every 15 min) starting m minutes
	// after w.
	slide := func(m int) window.Window {
		s := w.Add(time.Duration(m) * time.Minute)
		return window.Window{Start: s, End: s.Add(time.Hour)}
	}
	tests := []struct {
		name string
		res  Result
		want string
	}{
		{name: "one aggregation", res: Result{PedidoID: "P-1", Aggregations: []Outcome{{Fate: Accepted, Window: win, Key: "ES"}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES)"},
		{name: "two aggregations", res: Result{PedidoID: "P-1", Aggregations: []Outcome{
			{Aggregation: "ventas_hora_pais", Fate: Accepted, Window: win, Key: "ES"},
			{Aggregation: "ventas_sku_hora_movil", Fate: Accepted, Window: win, Key: "FRONTAL-LED",
				Elements: []ElementOutcome{
					{Window: slide(-45), Key: "FRONTAL-LED", Fate: TooLate}, {Window: slide(-30), Key: "FRONTAL-LED", Fate: Accepted},
					{Window: slide(-15), Key: "FRONTAL-LED", Fate: Accepted}, {Window: slide(0), Key: "FRONTAL-LED", Fate: Accepted},
				}}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES)\n" +
				"         ventas_sku_hora_movil: accepted (FRONTAL-LED in 3 windows 16:30-17:30 to 17:00-18:00, too late for window 16:15-17:15)"},
		{name: "second aggregation: several keys, all too late, a line without a SKU", res: Result{PedidoID: "P-2", Aggregations: []Outcome{
			{Aggregation: "ventas_hora_pais", Fate: TooLate, Window: win, Key: "FR"},
			{Aggregation: "ventas_sku_hora_movil", Fate: TooLate, SKUMissing: []int{2}, Elements: []ElementOutcome{
				{Window: slide(-15), Key: "A", Fate: TooLate}, {Window: slide(0), Key: "A", Fate: TooLate},
				{Window: slide(0), Key: "B", Fate: TooLate},
			}}}},
			want: "order P-2       event 2026-03-14T18:02:00+01:00: too_late (window 17:00-18:00 FR)\n" +
				"         ventas_sku_hora_movil: too_late (A too late for 2 windows 16:45-17:45 to 17:00-18:00; B too late for window 17:00-18:00; 1 line without a SKU)"},
		{name: "second aggregation: a duplicate has no elements", res: Result{PedidoID: "P-3", Aggregations: []Outcome{
			{Aggregation: "ventas_hora_pais", Fate: Duplicate, Window: win, Key: "ES"},
			{Aggregation: "ventas_sku_hora_movil", Fate: Duplicate, Window: win, Key: "MOCH-40L-AZ"}}},
			want: "order P-3       event 2026-03-14T18:02:00+01:00: duplicate (window 17:00-18:00 ES)\n" +
				"         ventas_sku_hora_movil: duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, OrderLine(tt.res, "2026-03-14T18:02:00+01:00")); diff != "" {
				t.Errorf("OrderLine (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTickJSON: `alpipe tick --format json` is render's one JSON style.
func TestTickJSON(t *testing.T) {
	var out bytes.Buffer
	if err := render.JSON(&out, TickResult{Now: time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC),
		Aggregations: []AggregationTick{{Aggregation: "ventas_hora_pais", Lag: 10 * time.Minute, OpenWindows: 3}}}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"now": "2026-03-14T18:30:00Z"`, `"aggregation": "ventas_hora_pais"`, `"lag_seconds": 600`,
		`"open_windows": 3`, `"watermark_before": null`, `"dead_letters_pending": 0`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("JSON lacks %s:\n%s", w, out.String())
		}
	}
}
