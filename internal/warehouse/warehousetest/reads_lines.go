package warehousetest

import (
	"slices"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// seedLines loads the lines of tagDay(tag): an object in two generations,
// an order in two countries, a NULL customer, money a float would round.
func seedLines(t *testing.T, w Warehouse, tag string) (d int32, fecha string) {
	t.Helper()
	d = tagDay(tag)
	fecha = warehouse.FormatDate(d)
	next := warehouse.FormatDate(d + 2)
	a, b := tag+"/a.csv", tag+"/b.csv"
	load(t, w, tag+"-a1",
		line{tag + "-p1", 1, fecha, tag + "-s1", 9, "9.99", "c1", "ES", a, 1, 2},
		line{tag + "-p9", 1, next, tag + "-s1", 1, "1", "c9", "ES", a, 1, 3})
	load(t, w, tag+"-a2",
		line{tag + "-p1", 1, fecha, tag + "-s1", 1, "0.1", "c1", "ES", a, 2, 2},
		line{tag + "-p1", 2, fecha, tag + "-s2", 2, "0.1", "c1", "ES", a, 2, 3},
		line{tag + "-p2", 1, fecha, tag + "-s1", 1, "0.2", "", "FR", a, 2, 4})
	load(t, w, tag+"-b1",
		line{tag + "-p3", 1, fecha, tag + "-s3", 3, "33.333333333", "c3", "PT", b, 7, 2},
		line{tag + "-p3", 2, fecha, tag + "-s3", 1, "0.000000001", "c3", "ES", b, 7, 3})
	return d, fecha
}

func testLineDates(t *testing.T, w Warehouse, _, tag string) {
	d, _ := seedLines(t, w, tag)
	got := must[[]int32](t, "line_dates")(warehouse.ReadLineDates(t.Context(), w, d-1, d+5))
	diff(t, "dates around the tag's", []int32{d, d + 2}, got)
	got = must[[]int32](t, "line_dates")(warehouse.ReadLineDates(t.Context(), w, d+1, d+2))
	diff(t, "bounds included", []int32{d + 2}, got)
	all := must[[]int32](t, "line_dates")(warehouse.ReadLineDates(t.Context(), w, warehouse.FirstDate, warehouse.LastDate))
	for _, want := range []int32{d, d + 2} {
		if !slices.Contains(all, want) {
			t.Errorf("every date: %v lacks %s", all, warehouse.FormatDate(want))
		}
	}
}

func testDayOrders(t *testing.T, w Warehouse, _, tag string) {
	d, _ := seedLines(t, w, tag)
	got := must[[]warehouse.DayOrder](t, "day_orders")(warehouse.ReadDayOrders(t.Context(), w, d))
	diff(t, "orders", []warehouse.DayOrder{
		{PedidoID: tag + "-p1", Pais: "ES", PaisMax: "ES", ClienteID: "c1", Importe: dec(t, "0.3"), Unidades: 3},
		{PedidoID: tag + "-p2", Pais: "FR", PaisMax: "FR", Importe: dec(t, "0.2"), Unidades: 1},
		{PedidoID: tag + "-p3", Pais: "ES", PaisMax: "PT", ClienteID: "c3", Importe: dec(t, "100.000000000"), Unidades: 4},
	}, got)
}

func testCountryTotals(t *testing.T, w Warehouse, _, tag string) {
	d, _ := seedLines(t, w, tag)
	got := must[[]warehouse.CountryTotal](t, "country_totals")(warehouse.ReadCountryTotals(t.Context(), w, d))
	diff(t, "totals", []warehouse.CountryTotal{
		{Pais: "ES", Importe: dec(t, "0.300000001"), Pedidos: 2, Unidades: 4},
		{Pais: "FR", Importe: dec(t, "0.2"), Pedidos: 1, Unidades: 1},
		{Pais: "PT", Importe: dec(t, "99.999999999"), Pedidos: 1, Unidades: 3},
	}, got)
}
