package warehousetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// windowSumDefect returns Features.WindowSumDefect when it applies, or "".
func windowSumDefect(w Warehouse, mode string) string {
	if fw, ok := w.(featured); ok && mode == warehouse.Discarding {
		return fw.f.WindowSumDefect
	}
	return ""
}

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

// diffSales compares rows read from view v as diffViewRows does.
func diffSales(t *testing.T, w Warehouse, mode string, v warehouse.View, tag, what string, want, got []warehouse.HourlySale) {
	t.Helper()
	if windowSumDefect(w, mode) == "" {
		diff(t, what, want, got)
		return
	}
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

// viewCols are the positions of window_start, the key and importe.
type viewCols struct{ start, key, importe int }

// diffViewRows compares rows of view v, of aggregation tag, as diff does;
// under the window-sum defect, importe apart.
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
	// importe as a DISCARDING view defines it, summed by GROUP BY rather than a window.
	sql := "SELECT window_start, " + v.Key + ", SUM(importe) AS importe\n" +
		"FROM (\n" +
		"  SELECT * FROM " + v.Panes + "\n" +
		"  WHERE aggregation = '" + tag + "'\n" +
		"  QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, " + v.Key + ", pane_index ORDER BY emitted_at DESC) = 1\n" +
		") AS panes\n" +
		"GROUP BY window_start, " + v.Key
	key := func(start, k string) string { return ts(t, start).UTC().Format(time.RFC3339Nano) + " " + k }
	sums := map[string]numeric.Dec{}
	for _, r := range query(t, w, sql) {
		sums[key(r[0], r[1])] = dec(t, r[2])
	}
	for _, r := range want {
		k, importe := key(r[c.start], r[c.key]), dec(t, r[c.importe])
		if g, ok := sums[k]; !ok || !g.Equal(importe) {
			t.Errorf("%s: importe of %s, summed outside the window function: got %s (found %t), want %s", what, k, g, ok, importe)
		}
	}
}
