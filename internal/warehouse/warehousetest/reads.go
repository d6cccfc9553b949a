package warehousetest

import (
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// readTests are the tests of the named reads, by name; runReads fails a
// read without one.
var readTests = map[string]func(t *testing.T, w Warehouse, mode, tag string){
	"windows_between": testWindowsBetween,
	"discard_summary": testDiscardSummary,
	"discard_counts":  testDiscardCounts,
	"discard_reasons": testDiscardReasons,
	"line_dates":      testLineDates,
	"day_orders":      testDayOrders,
	"country_totals":  testCountryTotals,
	"day_drops":       testDayDrops,
}

// perView are the tests of the reads every declared view has, by base name.
var perView = map[string]func(t *testing.T, w Warehouse, mode, tag string, q warehouse.NamedQuery){
	"panes": testPanesOf, "newest_windows": testNewestWindowsOf, warehouse.ListView: testListViewOf,
}

// listings are the reads testListings checks together, as Read/listings.
var listings = []string{warehouse.ListLineasPedido, warehouse.ListOpiniones, warehouse.ListVentasDiariasSKU,
	warehouse.ListPanes, warehouse.ListDiscards}

var decEqual = cmp.Comparer(func(a, b numeric.Dec) bool { return a.Equal(b) })

func diff[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	if d := cmp.Diff(want, got, decEqual); d != "" {
		t.Errorf("%s: (-want +got)\n%s", what, d)
	}
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// tagDay is a date of lineas_pedido that only tag uses.
func tagDay(tag string) int32 {
	h := fnv.New32a()
	h.Write([]byte(tag))
	return warehouse.DateOf(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) + int32(h.Sum32()%20000)
}

func runReads(t *testing.T, open func(t *testing.T) Warehouse, mode string) {
	listed := false
	for _, q := range warehouse.NamedQueries() {
		name := q.Name
		test, ok := readTests[name]
		if slices.Contains(listings, name) {
			if listed {
				continue
			}
			listed, name, test, ok = true, "listings", testListings, true
		}
		if f, found := perView[strings.SplitN(q.Name, ":", 2)[0]]; found && q.View != nil {
			test, ok = func(t *testing.T, w Warehouse, mode, tag string) { f(t, w, mode, tag, q) }, true
		}
		t.Run("Read/"+name, func(t *testing.T) {
			if !ok {
				t.Fatalf("named read %s has no test in warehousetest (reads.go)", q.Name)
			}
			test(t, open(t), mode, newTag(t))
		})
	}
}

// testListings checks every listing of a table (a view's: testListViewOf)
// for its columns and types and, for the tables it seeds, its own rows in
// order.
func testListings(t *testing.T, w Warehouse, mode, tag string) {
	d := tagDay(tag)
	fecha := warehouse.FormatDate(d)
	load(t, w, tag+"-l1",
		line{tag + "-p2", 1, fecha, tag + "-s1", 1, "0.2", "", "FR", tag + "/l.csv", 1, 4},
		line{tag + "-p1", 2, fecha, tag + "-s2", 2, "0.10", "c1", "ES", tag + "/l.csv", 1, 3},
		line{tag + "-p1", 1, fecha, tag + "-s1", 3, "1", "c1", "ES", tag + "/l.csv", 1, 2})
	if err := w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, []int32{d}); err != nil {
		t.Fatalf("RefreshDaily: %v", err)
	}
	start := warehouse.DayTime(d).Add(10 * time.Hour)
	h := func(n int) string { return start.Add(time.Duration(n) * time.Hour).Format(time.RFC3339) }
	add(t, w, warehouse.VentasHoraPaisPaneles,
		pane(t, tag, mode, h(1), "ES", 0, "EARLY", "1.5", 1, 1),
		pane(t, tag, mode, h(0), "PT", 0, "ON_TIME", "2", 1, 2),
		pane(t, tag, mode, h(0), "ES", 0, "ON_TIME", "3", 1, 3),
	)
	appendDrops(t, w,
		drop{id: tag + "-2", pedido: tag + "-q2", aggregation: tag, reason: warehouse.ReasonTooLate, event: start, window: start, received: start.Add(2 * time.Hour)},
		drop{id: tag + "-1", pedido: tag + "-q1", reason: "invalid: " + tag, event: start, received: start.Add(time.Hour)},
	)
	mine := func(c int, prefix string) func([]string) bool {
		return func(r []string) bool { return strings.HasPrefix(r[c], prefix) }
	}
	inDay := func(r []string) bool { return strings.HasPrefix(r[0], fecha) }
	// pane 0's watermark and emission (see pane) in the window at h(n).
	wm := func(n int) string { return start.Add(time.Duration(n)*time.Hour + 50*time.Minute).Format(time.RFC3339) }
	em := func(n int) string { return start.Add(time.Duration(n)*time.Hour + 61*time.Minute).Format(time.RFC3339) }
	tests := []struct {
		name  string
		cols  []string
		types []warehouse.Type
		keep  func([]string) bool // the test's rows; nil: rows not checked
		want  [][]string
	}{
		{name: warehouse.ListLineasPedido, keep: mine(0, tag),
			cols:  []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "importe", "pais", "source_line"},
			types: []warehouse.Type{warehouse.String, warehouse.Int64, warehouse.Date, warehouse.String, warehouse.Int64, warehouse.Numeric, warehouse.Numeric, warehouse.String, warehouse.Int64},
			want: [][]string{
				{tag + "-p1", "1", fecha, tag + "-s1", "3", "1", "3", "ES", "2"},
				{tag + "-p1", "2", fecha, tag + "-s2", "2", "0.1", "0.2", "ES", "3"},
				{tag + "-p2", "1", fecha, tag + "-s1", "1", "0.2", "0.2", "FR", "4"},
			}},
		{name: warehouse.ListOpiniones,
			cols:  []string{"opinion_id", "sku", "fecha", "puntuacion", "pais", "texto"},
			types: []warehouse.Type{warehouse.String, warehouse.String, warehouse.Date, warehouse.Int64, warehouse.String, warehouse.String}},
		{name: warehouse.ListVentasDiariasSKU, keep: mine(1, tag),
			cols:  []string{"fecha", "sku", "unidades", "importe", "lineas"},
			types: []warehouse.Type{warehouse.Date, warehouse.String, warehouse.Int64, warehouse.Numeric, warehouse.Int64},
			want:  [][]string{{fecha, tag + "-s1", "4", "3.2", "2"}, {fecha, tag + "-s2", "2", "0.2", "1"}}},
		{name: warehouse.ListPanes, keep: inDay,
			cols:  []string{"window_start", "pais", "pane_index", "timing", "importe", "pedidos", "unidades", "watermark", "emitted_at"},
			types: []warehouse.Type{warehouse.Timestamp, warehouse.String, warehouse.Int64, warehouse.String, warehouse.Numeric, warehouse.Int64, warehouse.Int64, warehouse.Timestamp, warehouse.Timestamp},
			want: [][]string{
				{h(0), "ES", "0", "ON_TIME", "3", "1", "3", wm(0), em(0)},
				{h(0), "PT", "0", "ON_TIME", "2", "1", "2", wm(0), em(0)},
				{h(1), "ES", "0", "EARLY", "1.5", "1", "1", wm(1), em(1)},
			}},
		{name: warehouse.ListDiscards, keep: mine(0, tag),
			cols:  []string{"pedido_id", "aggregation", "reason", "event_time", "window_start", "watermark", "received_at"},
			types: []warehouse.Type{warehouse.String, warehouse.String, warehouse.String, warehouse.Timestamp, warehouse.Timestamp, warehouse.Timestamp, warehouse.Timestamp},
			want: [][]string{
				{tag + "-q1", "NULL", "invalid: " + tag, h(0), "NULL", "NULL", h(1)},
				{tag + "-q2", tag, warehouse.ReasonTooLate, h(0), h(0), "NULL", h(2)},
			}},
	}
	var names []string
	for _, tc := range tests {
		names = append(names, tc.name)
	}
	diff(t, "the listings checked", listings, names)
	for _, tc := range tests {
		res, types, err := warehouse.ReadListing(t.Context(), w, tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		diff(t, tc.name+" columns", tc.cols, res.Columns)
		diff(t, tc.name+" types", tc.types, types)
		if tc.keep == nil {
			continue
		}
		got := slices.DeleteFunc(res.Rows, func(r []string) bool { return !tc.keep(r) })
		diff(t, tc.name+" rows", tc.want, got)
	}
}
