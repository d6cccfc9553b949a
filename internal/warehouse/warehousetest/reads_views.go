package warehousetest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// seedWindows appends the panes of aggregation tag: windows 10:00 to 13:00
// of 2026-03-14 for ES, FR and PT, ES at 12:00 in two panes (in both
// modes 25.5, 3, 5, ON_TIME, pane 1), and one of another aggregation.
func seedWindows(t *testing.T, w Warehouse, tag, mode string) (w10, w11, w12, w13 time.Time) {
	t.Helper()
	const h10, h11, h12, h13 = "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z", "2026-03-14T12:00:00Z", "2026-03-14T13:00:00Z"
	second := pane(t, tag, mode, h12, "ES", 1, "ON_TIME", "25.5", 3, 5)
	if mode == warehouse.Discarding {
		second = pane(t, tag, mode, h12, "ES", 1, "ON_TIME", "15.5", 2, 3)
	}
	rows := []warehouse.Row{
		pane(t, tag, mode, h10, "ES", 0, "ON_TIME", "1.1", 1, 1),
		pane(t, tag, mode, h10, "FR", 0, "ON_TIME", "2.2", 1, 2),
		pane(t, tag, mode, h11, "FR", 0, "LATE", "3.3", 1, 3),
		pane(t, tag, mode, h12, "ES", 0, "EARLY", "10", 1, 2),
		second,
		pane(t, tag, mode, h12, "PT", 0, "ON_TIME", "99999999999999999999.999999999", 7, 7),
		pane(t, tag, mode, h13, "FR", 0, "EARLY", "0.1", 1, 1),
		pane(t, tag+"x", mode, h13, "ES", 0, "EARLY", "5", 1, 1),
	}
	add(t, w, warehouse.VentasHoraPaisPaneles, rows...)
	return ts(t, h10), ts(t, h11), ts(t, h12), ts(t, h13)
}

func sale(t *testing.T, start time.Time, pais, importe string, pedidos, unidades int64, timing string, index int64) warehouse.HourlySale {
	return warehouse.HourlySale{WindowStart: start, WindowEnd: start.Add(time.Hour), Pais: pais, Importe: dec(t, importe),
		Pedidos: pedidos, Unidades: unidades, Timing: timing, PaneIndex: index}
}

func testWindowsBetween(t *testing.T, w Warehouse, mode, tag string) {
	_, w11, w12, w13 := seedWindows(t, w, tag, mode)
	got := must[[]warehouse.HourlySale](t, "windows_between")(warehouse.ReadWindowsBetween(t.Context(), w, tag, w11, w13))
	diffSales(t, w, mode, viewOf(t, warehouse.VentasHoraPais), tag, "windows 11:00 to 13:00", []warehouse.HourlySale{
		sale(t, w11, "FR", "3.3", 1, 3, "LATE", 0),
		sale(t, w12, "ES", "25.5", 3, 5, "ON_TIME", 1),
		sale(t, w12, "PT", "99999999999999999999.999999999", 7, 7, "ON_TIME", 0),
	}, got)
}

// viewPane is a pane of v of one order in the hour window starting at ws.
func viewPane(t *testing.T, v warehouse.View, tag, mode string, ws time.Time, key string, index int64,
	importe string, unidades int64, timing string) warehouse.Row {
	return paneRow{start: ws, end: ws.Add(time.Hour), key: key, timing: timing, importe: importe, index: index,
		pedidos: 1, unidades: unidades, watermark: ws, emitted: ws.Add(time.Minute)}.row(t, v, tag, mode)
}

// seedViewPanes appends to v's panes, out of order, windows of tagDay(tag)
// at 09:00 (A, B), 09:15 (A in two panes: both modes show 3 and 2 units)
// and 09:30 (B). It returns 09:00 and A's orders at 09:15 in the view.
func seedViewPanes(t *testing.T, w Warehouse, v warehouse.View, tag, mode string) (start time.Time, pedidosA int64) {
	start = warehouse.DayTime(tagDay(tag)).Add(9 * time.Hour)
	row := func(minutes int, key string, index int64, importe string, unidades int64) warehouse.Row {
		return viewPane(t, v, tag, mode, start.Add(time.Duration(minutes)*time.Minute), key, index, importe, unidades, "ON_TIME")
	}
	second, pedidosA := row(15, "A", 1, "3", 2), int64(1)
	if mode == warehouse.Discarding {
		second, pedidosA = row(15, "A", 1, "2", 1), 2
	}
	add(t, w, v.Panes,
		row(15, "A", 0, "1", 1), second, row(30, "B", 0, "99999999999999999999.999999999", 9), row(0, "B", 0, "7", 7), row(0, "A", 0, "0.5", 1),
	)
	return start, pedidosA
}

// testPanesOf checks a declared aggregation's panes read.
func testPanesOf(t *testing.T, w Warehouse, mode, tag string, q warehouse.NamedQuery) {
	v := *q.View
	start := warehouse.DayTime(tagDay(tag)).Add(9 * time.Hour)
	row := func(offset time.Duration, key string, index int64, importe string) warehouse.Row {
		return viewPane(t, v, tag, mode, start.Add(offset), key, index, importe, index+1, "EARLY")
	}
	add(t, w, v.Panes,
		row(15*time.Minute, "B", 0, "2"), row(0, "B", 1, "1.10"), row(0, "A", 0, "0.000000001"), row(0, "B", 0, "1"),
		row(45*time.Minute, "A", 0, "99999999999999999999.999999999"),
	)
	late := start.Add(45 * time.Minute)
	got := must[[]warehouse.Pane](t, "panes of "+v.Name)(warehouse.ReadPanes(t.Context(), w, v.Name, tag, []time.Time{late, start}))
	pane := func(at time.Time, key string, index int64, importe string) warehouse.Pane {
		return warehouse.Pane{WindowStart: at, Key: key, PaneIndex: index, Timing: "EARLY", Importe: dec(t, importe), Pedidos: 1, Unidades: index + 1}
	}
	diff(t, "panes of "+v.Name, []warehouse.Pane{pane(start, "A", 0, "0.000000001"), pane(start, "B", 0, "1"),
		pane(start, "B", 1, "1.1"), pane(late, "A", 0, "99999999999999999999.999999999")}, got)
	none := must[[]warehouse.Pane](t, "panes of "+v.Name)(warehouse.ReadPanes(t.Context(), w, v.Name, tag, nil))
	diff(t, "panes of no window", []warehouse.Pane{}, none)
}

// testNewestWindowsOf checks a declared view's newest-windows read.
func testNewestWindowsOf(t *testing.T, w Warehouse, mode, tag string, q warehouse.NamedQuery) {
	v := *q.View
	start, pedidosA := seedViewPanes(t, w, v, tag, mode)
	at := func(minutes int) time.Time { return start.Add(time.Duration(minutes) * time.Minute) }
	// Another aggregation's A at 09:30, and this aggregation's C at 09:00, a key
	// no read names and outside the two newest windows: no read below may
	// return them.
	add(t, w, v.Panes, viewPane(t, v, tag+"x", mode, at(30), "A", 0, "5", 1, "ON_TIME"),
		viewPane(t, v, tag, mode, start, "C", 0, "1", 1, "ON_TIME"))
	a0, b0 := sale(t, start, "A", "0.5", 1, 1, "ON_TIME", 0), sale(t, start, "B", "7", 1, 7, "ON_TIME", 0)
	a15 := sale(t, at(15), "A", "3", pedidosA, 2, "ON_TIME", 1)
	b30 := sale(t, at(30), "B", "99999999999999999999.999999999", 1, 9, "ON_TIME", 0)
	tests := []struct {
		name string
		q    warehouse.NewestWindows
		want []warehouse.HourlySale
	}{
		{name: "the newest two windows", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 2}, want: []warehouse.HourlySale{a15, b30}},
		{name: "the newest two windows holding A", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 2, Keys: []string{"A"}},
			want: []warehouse.HourlySale{a0, a15}},
		{name: "a range, A and B", want: []warehouse.HourlySale{a0, b0, a15},
			q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 24, From: start,
				Until: start.Add(30 * time.Minute), Keys: []string{"A", "B"}}},
		{name: "no window", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 0},
			want: []warehouse.HourlySale{}},
		{name: "another aggregation", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag + "y", Windows: 24}, want: []warehouse.HourlySale{}},
	}
	for _, tc := range tests {
		got := must[[]warehouse.HourlySale](t, tc.name)(warehouse.ReadNewestWindows(t.Context(), w, tc.q))
		diffSales(t, w, mode, v, tag, v.Name+": "+tc.name, tc.want, got)
	}
	if _, err := warehouse.ReadNewestWindows(t.Context(), w, warehouse.NewestWindows{View: v.Name + "_x", Aggregation: tag, Windows: 1}); err == nil {
		t.Errorf("newest windows of undeclared view %s_x: no error", v.Name)
	}
}

// testListViewOf checks a declared view's listing.
func testListViewOf(t *testing.T, w Warehouse, mode, tag string, q warehouse.NamedQuery) {
	v, name := *q.View, q.Name
	if got, ok := warehouse.ViewListing(v.Name); !ok || got != name {
		t.Errorf("ViewListing(%s) = %q, %v; want %q, true", v.Name, got, ok, name)
	}
	if _, ok := warehouse.ViewListing(v.Name + "_x"); ok {
		t.Errorf("ViewListing(%s_x): a listing of an undeclared view", v.Name)
	}
	fecha := warehouse.FormatDate(tagDay(tag))
	start, pedidosA := seedViewPanes(t, w, v, tag, mode)
	res, types, err := warehouse.ReadListing(t.Context(), w, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	diff(t, name+" columns", []string{"window_start", "window_end", v.Key, "importe", "pedidos", "unidades", "timing", "pane_index"}, res.Columns)
	diff(t, name+" types", []warehouse.Type{warehouse.Timestamp, warehouse.Timestamp, warehouse.String, warehouse.Numeric,
		warehouse.Int64, warehouse.Int64, warehouse.String, warehouse.Int64}, types)
	at := func(offset time.Duration) string { return start.Add(offset).Format(time.RFC3339) }
	got := slices.DeleteFunc(res.Rows, func(r []string) bool { return !strings.HasPrefix(r[0], fecha) })
	diffViewRows(t, w, mode, v, tag, name+" rows", [][]string{
		{at(0), at(time.Hour), "A", "0.5", "1", "1", "ON_TIME", "0"},
		{at(0), at(time.Hour), "B", "7", "1", "7", "ON_TIME", "0"},
		{at(15 * time.Minute), at(75 * time.Minute), "A", "3", strconv.FormatInt(pedidosA, 10), "2", "ON_TIME", "1"},
		{at(30 * time.Minute), at(90 * time.Minute), "B", "99999999999999999999.999999999", "1", "9", "ON_TIME", "0"},
	}, got, viewCols{start: 0, key: 2, importe: 3})
}
