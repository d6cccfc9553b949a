package warehousetest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// paneRow is one pane; merged (zero: NULL) for a session view.
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

// pane is one ventas_hora_pais_paneles row of aggregation tag.
func pane(t *testing.T, tag, mode, windowStart, pais string, index int64, timing, importe string, pedidos, unidades int64) warehouse.Row {
	t.Helper()
	start, n := ts(t, windowStart), time.Duration(index+1)
	return paneRow{start: start, end: start.Add(time.Hour), key: pais, timing: timing, importe: importe,
		index: index, pedidos: pedidos, unidades: unidades,
		watermark: start.Add(n * 50 * time.Minute), emitted: start.Add(n * 61 * time.Minute),
	}.row(t, viewOf(t, warehouse.VentasHoraPais), tag, mode)
}

// testView checks the view ventas_hora_pais in mode (see
// warehouse.View.SQL); the panes make both modes show the same figures.
func testView(t *testing.T, mode string, w Warehouse, tag string) {
	t.Helper()
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
	add(t, w, warehouse.VentasHoraPaisPaneles, es[2], fr, es[0])
	add(t, w, warehouse.VentasHoraPaisPaneles, next, es[1], es[0])
	want := [][]string{
		{tag, w18, "2026-03-14T19:00:00Z", "ES", "25.6", "4", "6", "LATE", "2"},
		{tag, w18, "2026-03-14T19:00:00Z", "FR", "7.25", "1", "1", "ON_TIME", "0"},
		{tag, w19, "2026-03-14T20:00:00Z", "ES", "1", "1", "1", "EARLY", "0"},
	}
	viewSQL := "SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index" +
		" FROM ventas_hora_pais WHERE aggregation = '" + tag + "' ORDER BY window_start, pais"
	view := viewOf(t, warehouse.VentasHoraPais)
	cols := viewCols{start: 1, key: 3, importe: 4}
	diffViewRows(t, w, mode, view, tag, viewSQL, want, query(t, w, viewSQL), cols)

	// A pane stored twice under two row IDs (a best-effort streaming dedup
	// that missed) still counts once.
	dup := es[1]
	dup.ID += "-again"
	add(t, w, warehouse.VentasHoraPaisPaneles, dup)
	diffViewRows(t, w, mode, view, tag, viewSQL, want, query(t, w, viewSQL), cols)
}

// sessionPane is one pane of session view v; mergedInto "" is NULL.
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

// testSessionView checks the first declared session view in mode: a
// session whose latest pane is MERGED is left out, the one it merged into
// shows, merged_into comes back as written.
func testSessionView(t *testing.T, mode string, w Warehouse, tag string) {
	t.Helper()
	i := slices.IndexFunc(warehouse.Views(), func(v warehouse.View) bool { return v.Session })
	if i < 0 {
		t.Skip("no session aggregation is declared")
	}
	v := warehouse.Views()[i]
	const s950, s1000, s1005 = "2026-03-14T09:50:00Z", "2026-03-14T10:00:00Z", "2026-03-14T10:05:00Z"
	const e1030, e1035 = "2026-03-14T10:30:00Z", "2026-03-14T10:35:00Z"
	// An order at 9:50 moved C1's session of 10:00, which ends MERGED into
	// 9:50 (from pane 0); C2's session is untouched.
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
	add(t, w, v.Panes, rows...)
	want := [][]string{
		{tag, s950, e1030, "C1", "30", "3", "4", "ON_TIME", "1"},
		{tag, s1005, e1035, "C2", "7.25", "1", "1", "ON_TIME", "0"},
	}
	viewSQL := "SELECT " + strings.Join(v.Columns(), ", ") +
		" FROM " + v.Name + " WHERE aggregation = '" + tag + "' ORDER BY window_start, " + v.Key
	diffViewRows(t, w, mode, v, tag, viewSQL, want, query(t, w, viewSQL), viewCols{start: 1, key: 3, importe: 4})

	check(t, w, "SELECT window_start, "+v.Key+", pane_index, timing, merged_into FROM "+v.Panes+
		" WHERE aggregation = '"+tag+"' ORDER BY window_start, "+v.Key+", pane_index", [][]string{
		{s950, "C1", "0", "EARLY", "NULL"},
		{s950, "C1", "1", "ON_TIME", "NULL"},
		{s1000, "C1", "0", "EARLY", "NULL"},
		{s1000, "C1", "1", "MERGED", s950},
		{s1005, "C2", "0", "ON_TIME", "NULL"},
	})
}
