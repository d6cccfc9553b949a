package warehousetest

import (
	"errors"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func load(t *testing.T, w Warehouse, id string, ls ...line) {
	t.Helper()
	res, err := w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, ls...))})
	if err != nil {
		t.Fatalf("Load %s: %v", id, err)
	}
	if res.Rows != int64(len(ls)) {
		t.Fatalf("Load %s: %+v, want %d rows", id, res, len(ls))
	}
}

func refresh(t *testing.T, w Warehouse, dates ...string) {
	t.Helper()
	days := make([]int32, len(dates))
	for i, d := range dates {
		days[i] = day(t, d)
	}
	if err := w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, days); err != nil {
		t.Fatalf("RefreshDaily %v: %v", dates, err)
	}
}

func dailySQL(tag string) string {
	return "SELECT fecha, sku, unidades, importe, lineas FROM ventas_diarias_sku WHERE sku LIKE '" + tag + "-%' ORDER BY fecha, sku"
}

func testRefreshDates(t *testing.T, w Warehouse, tag string) {
	a := "gs://landing/" + tag + "/a.csv"
	b := "gs://landing/" + tag + "/b.csv"
	x, y := tag+"-X", tag+"-Y"
	load(t, w, tag+"-a1",
		line{pedido: tag + "-1", linea: 1, fecha: "2026-03-13", sku: x, cantidad: 3, precio: "0.05", pais: "ES", object: a, gen: 1, srcLine: 2},
		line{pedido: tag + "-2", linea: 1, fecha: "2026-03-14", sku: x, cantidad: 2, precio: "89.90", pais: "ES", object: a, gen: 1, srcLine: 3},
		line{pedido: tag + "-2", linea: 2, fecha: "2026-03-14", sku: y, cantidad: 1, precio: "120", pais: "ES", object: a, gen: 1, srcLine: 4},
		line{pedido: tag + "-3", linea: 1, fecha: "2026-03-15", sku: x, cantidad: 1, precio: "10", pais: "FR", object: a, gen: 1, srcLine: 5},
	)
	refresh(t, w, "2026-03-13", "2026-03-14")
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", x, "3", "0.15", "1"},
		{"2026-03-14", x, "2", "179.8", "1"},
		{"2026-03-14", y, "1", "120", "1"},
	})

	// A second file of the day: only the refreshed date changes.
	load(t, w, tag+"-b1",
		line{pedido: tag + "-4", linea: 1, fecha: "2026-03-14", sku: x, cantidad: 1, precio: "0.1", pais: "PT", object: b, gen: 1, srcLine: 2},
		line{pedido: tag + "-5", linea: 1, fecha: "2026-03-15", sku: x, cantidad: 5, precio: "1", pais: "PT", object: b, gen: 1, srcLine: 3},
		line{pedido: tag + "-6", linea: 1, fecha: "2026-03-13", sku: x, cantidad: 9, precio: "1", pais: "PT", object: b, gen: 1, srcLine: 4},
	)
	refresh(t, w, "2026-03-14")
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", x, "3", "0.15", "1"},
		{"2026-03-14", x, "3", "179.9", "2"},
		{"2026-03-14", y, "1", "120", "1"},
	})

	// Repeated dates are harmless, and refreshing again changes nothing.
	for range 2 {
		refresh(t, w, "2026-03-15", "2026-03-13", "2026-03-15")
		check(t, w, dailySQL(tag), [][]string{
			{"2026-03-13", x, "12", "9.15", "2"},
			{"2026-03-14", x, "3", "179.9", "2"},
			{"2026-03-14", y, "1", "120", "1"},
			{"2026-03-15", x, "6", "15", "2"},
		})
	}
	if err := w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, nil); err != nil {
		t.Errorf("RefreshDaily of no dates: %v", err)
	}
	t.Run("SumsOutOfRangeAreLeftOutAndReported", func(t *testing.T) {
		testRefreshOutOfRange(t, w, newTag(t))
	})
}

func testRefreshNewestGeneration(t *testing.T, w Warehouse, tag string) {
	a := "gs://landing/" + tag + "/a.csv"
	b := "gs://landing/" + tag + "/b.csv"
	c := "gs://landing/" + tag + "/c.csv"
	x, y := tag+"-X", tag+"-Y"
	load(t, w, tag+"-a100",
		line{pedido: tag + "-1", linea: 1, fecha: "2026-03-14", sku: x, cantidad: 2, precio: "10", pais: "ES", object: a, gen: 100, srcLine: 2},
		line{pedido: tag + "-1", linea: 2, fecha: "2026-03-14", sku: y, cantidad: 1, precio: "5", pais: "ES", object: a, gen: 100, srcLine: 3},
	)
	load(t, w, tag+"-b50",
		line{pedido: tag + "-2", linea: 1, fecha: "2026-03-14", sku: x, cantidad: 1, precio: "1", pais: "ES", object: b, gen: 50, srcLine: 2},
	)
	refresh(t, w, "2026-03-14")
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-14", x, "3", "21", "2"},
		{"2026-03-14", y, "1", "5", "1"},
	})

	// A corrected re-export overwrites a.csv: only its newest generation counts.
	corrected := line{pedido: tag + "-1", linea: 1, fecha: "2026-03-14", sku: x, cantidad: 1, precio: "10", pais: "ES", object: a, gen: 200, srcLine: 2}
	load(t, w, tag+"-a200", corrected)
	refresh(t, w, "2026-03-14")
	want := [][]string{{"2026-03-14", x, "2", "11", "2"}}
	check(t, w, dailySQL(tag), want)

	// The same content uploaded again is a newer generation: still counted once.
	corrected.gen = 300
	load(t, w, tag+"-a300", corrected)
	refresh(t, w, "2026-03-14")
	check(t, w, dailySQL(tag), want)

	// The rule holds within each date's partition: a generation that no
	// longer has rows on a date leaves that date to the older generation.
	load(t, w, tag+"-c1",
		line{pedido: tag + "-3", linea: 1, fecha: "2026-03-13", sku: x, cantidad: 4, precio: "2", pais: "ES", object: c, gen: 1, srcLine: 2},
		line{pedido: tag + "-3", linea: 2, fecha: "2026-03-15", sku: x, cantidad: 1, precio: "2", pais: "ES", object: c, gen: 1, srcLine: 3},
	)
	load(t, w, tag+"-c2",
		line{pedido: tag + "-3", linea: 2, fecha: "2026-03-15", sku: x, cantidad: 7, precio: "2", pais: "ES", object: c, gen: 2, srcLine: 2},
	)
	refresh(t, w, "2026-03-13", "2026-03-15")
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", x, "4", "8", "1"},
		{"2026-03-14", x, "2", "11", "2"},
		{"2026-03-15", x, "7", "14", "1"},
	})
}

func testRefreshUnknown(t *testing.T, w Warehouse, _ string) {
	if err := w.RefreshDaily(t.Context(), "no_such_aggregate", []int32{20526}); err == nil {
		t.Error("RefreshDaily of an unknown aggregate succeeded, want an error")
	}
}

const maxNumeric = "99999999999999999999999999999.999999999"

// testRefreshOutOfRange: a group whose sum its column cannot hold is left
// out and reported, the rest of its date refreshed, on every refresh
// until the rows change so that it fits.
func testRefreshOutOfRange(t *testing.T, w Warehouse, tag string) {
	a := "gs://landing/" + tag + "/a.csv"
	b := "gs://landing/" + tag + "/b.csv"
	sku := func(s string) string { return tag + "-" + s }
	n := int64(0)
	l := func(fecha, s string, cantidad int64, precio, object string, gen int64) line {
		n++
		return line{pedido: tag + "-p", linea: n, fecha: fecha, sku: sku(s), cantidad: cantidad, precio: precio, pais: "ES", object: object, gen: gen, srcLine: n + 1}
	}
	load(t, w, tag+"-a1",
		l("2026-03-13", "X", 1, "5", a, 1),
		// The case: past NUMERIC by 0.999999999.
		l("2026-03-14", "X", 1, maxNumeric, a, 1),
		l("2026-03-14", "X", 1, "1.00", a, 1),
		l("2026-03-14", "Y", 2, "10", a, 1),
		// Past INT64 in units, not in importe.
		l("2026-03-14", "Z", 9000000000000000000, "0.000000001", a, 1),
		l("2026-03-14", "Z", 9000000000000000000, "0.000000001", a, 1),
		// Past NUMERIC's minimum by 10^-9.
		l("2026-03-14", "N", 1, "-"+maxNumeric, a, 1),
		l("2026-03-14", "N", 1, "-0.000000001", a, 1),
		l("2026-03-14", "F", 1, "-"+maxNumeric, a, 1),
		l("2026-03-14", "F", 1, "-0.5", a, 1),
		// Twice the maximum: a sum that needs more than 128 bits of 10^-9.
		l("2026-03-14", "H", 1, maxNumeric, a, 1),
		l("2026-03-14", "H", 1, maxNumeric, a, 1),
		// Exactly the maximum and the minimum fit, whatever the order of
		// the additions.
		l("2026-03-14", "E", 1, maxNumeric, a, 1),
		l("2026-03-14", "E", 1, "-0.5", a, 1),
		l("2026-03-14", "E", 1, "0.5", a, 1),
		l("2026-03-14", "M", 1, "-"+maxNumeric, a, 1),
	)
	d13, d14 := day(t, "2026-03-13"), day(t, "2026-03-14")
	overflows := []warehouse.Overflow{
		{Date: d14, Keys: []string{sku("F")}, Column: "importe", Sum: "-100000000000000000000000000000.499999999"},
		{Date: d14, Keys: []string{sku("H")}, Column: "importe", Sum: "199999999999999999999999999999.999999998"},
		{Date: d14, Keys: []string{sku("N")}, Column: "importe", Sum: "-100000000000000000000000000000"},
		{Date: d14, Keys: []string{sku("X")}, Column: "importe", Sum: "100000000000000000000000000000.999999999"},
		{Date: d14, Keys: []string{sku("Z")}, Column: "unidades", Sum: "18000000000000000000"},
	}
	checkOverflow := func(err error, want []warehouse.Overflow) {
		t.Helper()
		var oe *warehouse.OverflowError
		if len(want) == 0 {
			if err != nil {
				t.Fatalf("RefreshDaily: %v, want no error", err)
			}
			return
		}
		if !errors.As(err, &oe) {
			t.Fatalf("RefreshDaily: error %v, want an OverflowError naming %d sums", err, len(want))
		}
		wantErr := &warehouse.OverflowError{Aggregate: warehouse.VentasDiariasSKU,
			KeyNames: []string{"sku"}, Overflows: want}
		diff(t, "OverflowError", wantErr, oe)
	}

	checkOverflow(w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, []int32{d13, d14}),
		overflows)
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", sku("X"), "1", "5", "1"},
		{"2026-03-14", sku("E"), "3", maxNumeric, "3"},
		{"2026-03-14", sku("M"), "1", "-" + maxNumeric, "1"},
		{"2026-03-14", sku("Y"), "2", "20", "1"},
	})

	// A later file of the same date refreshes it: the new figures land,
	// the groups still out of range are reported again.
	load(t, w, tag+"-b1", l("2026-03-14", "Y", 1, "0.5", b, 1))
	checkOverflow(w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, []int32{d14}), overflows)
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", sku("X"), "1", "5", "1"},
		{"2026-03-14", sku("E"), "3", maxNumeric, "3"},
		{"2026-03-14", sku("M"), "1", "-" + maxNumeric, "1"},
		{"2026-03-14", sku("Y"), "3", "20.5", "2"},
	})

	// A corrected a.csv brings the date back into range.
	load(t, w, tag+"-a2",
		l("2026-03-14", "X", 1, "1", a, 2),
		l("2026-03-14", "X", 1, "1", a, 2),
	)
	checkOverflow(w.RefreshDaily(t.Context(), warehouse.VentasDiariasSKU, []int32{d14}), nil)
	check(t, w, dailySQL(tag), [][]string{
		{"2026-03-13", sku("X"), "1", "5", "1"},
		{"2026-03-14", sku("X"), "2", "2", "2"},
		{"2026-03-14", sku("Y"), "1", "0.5", "1"},
	})
}
