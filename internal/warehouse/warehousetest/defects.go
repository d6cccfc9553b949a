package warehousetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// windowSumDefect returns the defect that keeps the importe of w's views
// in mode from being compared as read (Features.WindowSumDefect), or "".
func windowSumDefect(w Warehouse, mode string) string {
	if fw, ok := w.(featured); ok && mode == warehouse.Discarding {
		return fw.f.WindowSumDefect
	}
	return ""
}

// viewOf returns the declared view name.
func viewOf(t *testing.T, name string) warehouse.View {
	t.Helper()
	for _, v := range warehouse.Views() {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no declared view %s", name)
	return warehouse.View{}
}

// viewSum is the importe view v shows for one window and key.
type viewSum struct {
	start   time.Time
	key     string
	importe numeric.Dec
}

// diffSales compares rows read from view v, of aggregation tag, as diff
// does; under the window-sum defect, as diffViewRows does.
func diffSales(t *testing.T, w Warehouse, mode string, v warehouse.View, tag, what string, want, got []warehouse.HourlySale) {
	t.Helper()
	if windowSumDefect(w, mode) == "" {
		diff(t, what, want, got)
		return
	}
	// Every field as text, the window start, key and importe first.
	rows := func(ss []warehouse.HourlySale) [][]string {
		out := make([][]string, len(ss))
		for i, s := range ss {
			out[i] = []string{s.WindowStart.UTC().Format(time.RFC3339Nano), s.Pais, s.Importe.String(),
				fmt.Sprint(s.WindowEnd.UTC(), s.Pedidos, s.Unidades, s.Timing, s.PaneIndex)}
		}
		return out
	}
	diffViewRows(t, w, mode, v, tag, what, rows(want), rows(got), viewCols{start: 0, key: 1, importe: 2})
}

// viewCols are the positions of window_start, the key and importe in a
// view's rows as text.
type viewCols struct{ start, key, importe int }

// diffViewRows compares rows of view v, of aggregation tag, read as text,
// as diff does; under the window-sum defect, importe is compared outside
// the window function (checkSums).
func diffViewRows(t *testing.T, w Warehouse, mode string, v warehouse.View, tag, what string, want, got [][]string, c viewCols) {
	t.Helper()
	defect := windowSumDefect(w, mode)
	if defect == "" {
		diff(t, what, want, got)
		return
	}
	t.Logf("engine defect: %s", defect)
	blank := func(rows [][]string) [][]string {
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = slices.Clone(r)
			if c.importe < len(r) {
				out[i][c.importe] = ""
			}
		}
		return out
	}
	diff(t, what+", importe aside", blank(want), blank(got))
	sums := make([]viewSum, len(want))
	for i, r := range want {
		sums[i] = viewSum{ts(t, r[c.start]), r[c.key], dec(t, r[c.importe])}
	}
	checkSums(t, w, v, tag, what, sums)
}

// checkView compares the rows of sql, a read of view v's rows of
// aggregation tag, with want (see diffViewRows).
func checkView(t *testing.T, w Warehouse, mode string, v warehouse.View, tag, sql string, want [][]string, c viewCols) {
	t.Helper()
	if windowSumDefect(w, mode) == "" {
		check(t, w, sql, want)
		return
	}
	diffViewRows(t, w, mode, v, tag, sql, want, query(t, w, sql), c)
}

// checkSums checks the importe of each window and key of want as a
// DISCARDING view defines it, the sum of the panes counted once each, with
// the sum taken by GROUP BY rather than over a window.
func checkSums(t *testing.T, w Warehouse, v warehouse.View, tag, what string, want []viewSum) {
	t.Helper()
	sql := "SELECT window_start, " + v.Key + ", SUM(importe) AS importe\n" +
		"FROM (\n" +
		"  SELECT * FROM " + v.Panes + "\n" +
		"  WHERE aggregation = '" + tag + "'\n" +
		"  QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, " + v.Key + ", pane_index ORDER BY emitted_at DESC) = 1\n" +
		") AS panes\n" +
		"GROUP BY window_start, " + v.Key
	got := map[string]numeric.Dec{}
	for _, r := range query(t, w, sql) {
		got[ts(t, r[0]).UTC().Format(time.RFC3339Nano)+" "+r[1]] = dec(t, r[2])
	}
	for _, s := range want {
		k := s.start.UTC().Format(time.RFC3339Nano) + " " + s.key
		if g, ok := got[k]; !ok || !g.Equal(s.importe) {
			t.Errorf("%s: importe of %s, summed outside the window function: got %s (found %t), want %s", what, k, g, ok, s.importe)
		}
	}
}
