package warehousetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// pane is one ventas_hora_pais_paneles row of aggregation tag, identified
// by its pane identity.
func pane(t *testing.T, tag, mode, windowStart, pais string, index int64, timing, importe string, pedidos, unidades int64) warehouse.Row {
	t.Helper()
	start := ts(t, windowStart)
	return warehouse.Row{
		ID: tag + "/" + windowStart + "/" + pais + "/" + strconv.FormatInt(index, 10),
		Values: rowOf(t, warehouse.VentasHoraPaisPaneles, map[string]warehouse.Value{
			"aggregation":  warehouse.StringValue(tag),
			"window_start": warehouse.TimeValue(start),
			"window_end":   warehouse.TimeValue(start.Add(time.Hour)),
			"pais":         warehouse.StringValue(pais),
			"importe":      warehouse.DecValue(dec(t, importe)),
			"pedidos":      warehouse.IntValue(pedidos),
			"unidades":     warehouse.IntValue(unidades),
			"pane_index":   warehouse.IntValue(index),
			"timing":       warehouse.StringValue(timing),
			"accumulation": warehouse.StringValue(mode),
			"watermark":    warehouse.TimeValue(start.Add(time.Duration(index+1) * 50 * time.Minute)),
			"emitted_at":   warehouse.TimeValue(start.Add(time.Duration(index+1) * 61 * time.Minute)),
		}),
	}
}

// RunView checks the dashboard view ventas_hora_pais of a warehouse whose
// view was created for mode: it shows, per window and country, the latest
// pane (ACCUMULATING) or the sum of the panes with the latest pane's timing
// and index (DISCARDING). The panes are written so that both modes must
// show the same figures.
func RunView(t *testing.T, mode string, w Warehouse) {
	t.Helper()
	ctx := context.Background()
	tag := newTag(t)
	const w18, w19 = "2026-03-14T18:00:00Z", "2026-03-14T19:00:00Z"
	var es []warehouse.Row
	switch mode {
	case warehouse.Accumulating: // totals so far
		es = []warehouse.Row{
			pane(t, tag, mode, w18, "ES", 0, "EARLY", "10", 1, 2),
			pane(t, tag, mode, w18, "ES", 1, "ON_TIME", "25.5", 3, 5),
			pane(t, tag, mode, w18, "ES", 2, "LATE", "25.6", 4, 6),
		}
	case warehouse.Discarding: // changes since the previous pane
		es = []warehouse.Row{
			pane(t, tag, mode, w18, "ES", 0, "EARLY", "10", 1, 2),
			pane(t, tag, mode, w18, "ES", 1, "ON_TIME", "15.5", 2, 3),
			pane(t, tag, mode, w18, "ES", 2, "LATE", "0.1", 1, 1),
		}
	default:
		t.Fatalf("unknown accumulation mode %q", mode)
	}
	fr := pane(t, tag, mode, w18, "FR", 0, "ON_TIME", "7.25", 1, 1)
	next := pane(t, tag, mode, w19, "ES", 0, "EARLY", "1", 1, 1)
	// Out of order, and with a retried pane: the view must not care.
	if err := w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{es[2], fr, es[0]}); err != nil {
		t.Fatalf("Append panes: %v", err)
	}
	if err := w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{next, es[1], es[0]}); err != nil {
		t.Fatalf("Append panes: %v", err)
	}
	want := [][]string{
		{tag, w18, "2026-03-14T19:00:00Z", "ES", "25.6", "4", "6", "LATE", "2"},
		{tag, w18, "2026-03-14T19:00:00Z", "FR", "7.25", "1", "1", "ON_TIME", "0"},
		{tag, w19, "2026-03-14T20:00:00Z", "ES", "1", "1", "1", "EARLY", "0"},
	}
	viewSQL := "SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index" +
		" FROM ventas_hora_pais WHERE aggregation = '" + tag + "' ORDER BY window_start, pais"
	view := viewOf(t, warehouse.VentasHoraPais)
	cols := viewCols{start: 1, key: 3, importe: 4}
	checkView(t, w, mode, view, tag, viewSQL, want, cols)

	// A pane stored twice under two row IDs (a best-effort streaming dedup
	// that missed) still counts once.
	dup := es[1]
	dup.ID += "-again"
	if err := w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{dup}); err != nil {
		t.Fatalf("Append duplicate pane: %v", err)
	}
	checkView(t, w, mode, view, tag, viewSQL, want, cols)
}
