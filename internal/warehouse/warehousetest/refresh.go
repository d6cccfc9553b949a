package warehousetest

import (
	"context"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func load(t *testing.T, w Warehouse, id string, ls ...line) {
	t.Helper()
	res, err := w.Load(context.Background(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, ls...))})
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
	if err := w.RefreshDaily(context.Background(), warehouse.VentasDiariasSKU, days); err != nil {
		t.Fatalf("RefreshDaily %v: %v", dates, err)
	}
}

func dailySQL(tag string) string {
	return "SELECT fecha, sku, unidades, importe, lineas FROM ventas_diarias_sku WHERE sku LIKE '" + tag + "-%' ORDER BY fecha, sku"
}

func testRefreshDates(t *testing.T, w Warehouse) {
	tag := newTag(t)
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
	if err := w.RefreshDaily(context.Background(), warehouse.VentasDiariasSKU, nil); err != nil {
		t.Errorf("RefreshDaily of no dates: %v", err)
	}
}

func testRefreshNewestGeneration(t *testing.T, w Warehouse) {
	tag := newTag(t)
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

func testRefreshUnknown(t *testing.T, w Warehouse) {
	if err := w.RefreshDaily(context.Background(), "no_such_aggregate", []int32{20526}); err == nil {
		t.Error("RefreshDaily of an unknown aggregate succeeded, want an error")
	}
}
