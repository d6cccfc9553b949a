package warehousetest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// paneRow is one row of v's panes table for aggregation tag: pane index of
// key's window [start, end), with its watermark and emission time, and for
// a session view merged_into (zero: NULL).
type paneRow struct {
	start, end               time.Time
	key, timing, importe     string
	index, pedidos, unidades int64
	watermark, emitted       time.Time
	merged                   time.Time
}

func (p paneRow) row(t *testing.T, v warehouse.View, tag, mode string) warehouse.Row {
	t.Helper()
	byName := map[string]warehouse.Value{
		"aggregation": warehouse.StringValue(tag), "window_start": warehouse.TimeValue(p.start),
		"window_end": warehouse.TimeValue(p.end), v.Key: warehouse.StringValue(p.key),
		"importe": warehouse.DecValue(dec(t, p.importe)), "pedidos": warehouse.IntValue(p.pedidos),
		"unidades": warehouse.IntValue(p.unidades), "pane_index": warehouse.IntValue(p.index),
		"timing": warehouse.StringValue(p.timing), "accumulation": warehouse.StringValue(mode),
		"watermark": warehouse.TimeValue(p.watermark), "emitted_at": warehouse.TimeValue(p.emitted),
	}
	if v.Session {
		byName["merged_into"] = warehouse.NullValue()
		if !p.merged.IsZero() {
			byName["merged_into"] = warehouse.TimeValue(p.merged)
		}
	}
	id := tag + "/" + p.start.Format(time.RFC3339) + "/" + p.key + "/" + strconv.FormatInt(p.index, 10)
	return warehouse.Row{ID: id, Values: rowOf(t, v.Panes, byName)}
}

// pane is one ventas_hora_pais_paneles row of aggregation tag, identified
// by its pane identity.
func pane(t *testing.T, tag, mode, windowStart, pais string, index int64, timing, importe string, pedidos, unidades int64) warehouse.Row {
	t.Helper()
	start, n := ts(t, windowStart), time.Duration(index+1)
	return paneRow{start: start, end: start.Add(time.Hour), key: pais, timing: timing, importe: importe,
		index: index, pedidos: pedidos, unidades: unidades,
		watermark: start.Add(n * 50 * time.Minute), emitted: start.Add(n * 61 * time.Minute),
	}.row(t, viewOf(t, warehouse.VentasHoraPais), tag, mode)
}

// testView checks the dashboard view ventas_hora_pais of a warehouse whose
// view was created for mode: it shows, per window and country, the latest
// pane (ACCUMULATING) or the sum of the panes with the latest pane's timing
// and index (DISCARDING). The panes are written so that both modes must
// show the same figures.
func testView(t *testing.T, mode string, w Warehouse) {
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

// sessionPane is one row of the panes table of session view v, of
// aggregation tag; mergedInto "" is NULL.
func sessionPane(t *testing.T, v warehouse.View, tag, mode, start, end, key string, index int64, timing, importe string, pedidos, unidades int64, mergedInto string) warehouse.Row {
	t.Helper()
	p := paneRow{start: ts(t, start), end: ts(t, end), key: key, timing: timing, importe: importe,
		index: index, pedidos: pedidos, unidades: unidades}
	n := time.Duration(index + 1)
	p.watermark, p.emitted = p.start.Add(n*20*time.Minute), p.start.Add(n*21*time.Minute)
	if mergedInto != "" {
		p.merged = ts(t, mergedInto)
	}
	return p.row(t, v, tag, mode)
}

// testSessionView checks the view of the first declared session aggregation
// of a warehouse whose views were created for mode: a session identity
// whose latest pane is MERGED is left out, the one it merged into shows its
// current value, and merged_into comes back as written (docs/event-time.md,
// "Session windows"). With no session aggregation declared it skips.
func testSessionView(t *testing.T, mode string, w Warehouse) {
	t.Helper()
	i := slices.IndexFunc(warehouse.Views(), func(v warehouse.View) bool { return v.Session })
	if i < 0 {
		t.Skip("no session aggregation is declared")
	}
	v := warehouse.Views()[i]
	ctx := context.Background()
	tag := newTag(t)
	const s950, s1000, s1005 = "2026-03-14T09:50:00Z", "2026-03-14T10:00:00Z", "2026-03-14T10:05:00Z"
	const e1030, e1035 = "2026-03-14T10:30:00Z", "2026-03-14T10:35:00Z"
	// C1's session starting 10:00 had an EARLY pane, then an order at 9:50
	// moved its start: the 10:00 identity ends MERGED into 9:50, which
	// begins at pane 0. C2's session is untouched.
	var rows []warehouse.Row
	switch mode {
	case warehouse.Accumulating:
		rows = []warehouse.Row{
			sessionPane(t, v, tag, mode, s1000, e1030, "C1", 0, "EARLY", "10", 1, 1, ""),
			sessionPane(t, v, tag, mode, s1000, e1030, "C1", 1, "MERGED", "0", 0, 0, s950),
			sessionPane(t, v, tag, mode, s950, e1030, "C1", 0, "EARLY", "25", 2, 3, ""),
			sessionPane(t, v, tag, mode, s950, e1030, "C1", 1, "ON_TIME", "30", 3, 4, ""),
		}
	case warehouse.Discarding:
		rows = []warehouse.Row{
			sessionPane(t, v, tag, mode, s1000, e1030, "C1", 0, "EARLY", "10", 1, 1, ""),
			sessionPane(t, v, tag, mode, s1000, e1030, "C1", 1, "MERGED", "-10", -1, -1, s950),
			sessionPane(t, v, tag, mode, s950, e1030, "C1", 0, "EARLY", "25", 2, 3, ""),
			sessionPane(t, v, tag, mode, s950, e1030, "C1", 1, "ON_TIME", "5", 1, 1, ""),
		}
	default:
		t.Fatalf("unknown accumulation mode %q", mode)
	}
	rows = append(rows, sessionPane(t, v, tag, mode, s1005, e1035, "C2", 0, "ON_TIME", "7.25", 1, 1, ""))
	if err := w.Append(ctx, v.Panes, rows); err != nil {
		t.Fatalf("Append session panes: %v", err)
	}
	want := [][]string{
		{tag, s950, e1030, "C1", "30", "3", "4", "ON_TIME", "1"},
		{tag, s1005, e1035, "C2", "7.25", "1", "1", "ON_TIME", "0"},
	}
	viewSQL := "SELECT " + strings.Join(v.Columns(), ", ") +
		" FROM " + v.Name + " WHERE aggregation = '" + tag + "' ORDER BY window_start, " + v.Key
	checkView(t, w, mode, v, tag, viewSQL, want, viewCols{start: 1, key: 3, importe: 4})

	check(t, w, "SELECT window_start, "+v.Key+", pane_index, timing, merged_into FROM "+v.Panes+
		" WHERE aggregation = '"+tag+"' ORDER BY window_start, "+v.Key+", pane_index", [][]string{
		{s950, "C1", "0", "EARLY", "NULL"},
		{s950, "C1", "1", "ON_TIME", "NULL"},
		{s1000, "C1", "0", "EARLY", "NULL"},
		{s1000, "C1", "1", "MERGED", s950},
		{s1005, "C2", "0", "ON_TIME", "NULL"},
	})
}
