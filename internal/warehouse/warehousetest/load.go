package warehousetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// threeLines are the rows of one small file generation of object obj.
func threeLines(tag, obj string) []line {
	return []line{
		{pedido: tag + "-P1", linea: 1, fecha: "2026-03-14", sku: tag + "-MOCH", cantidad: 2, precio: "89.90", cliente: "C-1", pais: "ES", object: obj, gen: 1, srcLine: 2},
		{pedido: tag + "-P1", linea: 2, fecha: "2026-03-14", sku: tag + "-BOTA", cantidad: 1, precio: "120", cliente: "C-1", pais: "ES", object: obj, gen: 1, srcLine: 3},
		{pedido: tag + "-P2", linea: 1, fecha: "2026-03-13", sku: tag + "-MOCH", cantidad: 3, precio: "0.05", pais: "PT", object: obj, gen: 1, srcLine: 4},
	}
}

func countSQL(tag string) string {
	return "SELECT COUNT(*) FROM lineas_pedido WHERE pedido_id LIKE '" + tag + "-%'"
}

func testLoadAppendsRows(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/pedidos.csv"
	res, err := w.Load(t.Context(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, threeLines(tag, obj)...))})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	diff(t, "Load result", warehouse.LoadResult{Rows: 3}, res)
	check(t, w, "SELECT pedido_id, linea, fecha, sku, cantidad, precio_unitario, importe, cliente_id, pais, source_object, source_generation, source_line"+
		" FROM lineas_pedido WHERE pedido_id LIKE '"+tag+"-%' ORDER BY source_line", [][]string{
		{tag + "-P1", "1", "2026-03-14", tag + "-MOCH", "2", "89.9", "179.8", "C-1", "ES", obj, "1", "2"},
		{tag + "-P1", "2", "2026-03-14", tag + "-BOTA", "1", "120", "120", "C-1", "ES", obj, "1", "3"},
		{tag + "-P2", "1", "2026-03-13", tag + "-MOCH", "3", "0.05", "0.15", "NULL", "PT", obj, "1", "4"},
	})
}

func testLoadExactlyOnce(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/pedidos.csv"
	id := tag + "-g1"
	load(t, w, id, threeLines(tag, obj)...)
	again := rowsOf(lines(t, threeLines(tag, obj)...))
	res, err := w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido,
		Rows: again})
	if err != nil {
		t.Fatalf("second Load: %v", err)
	}
	diff(t, "second Load result", warehouse.LoadResult{AlreadyLoaded: true}, res)
	if n := again.Nexts.Load(); n != 0 {
		t.Errorf("second Load read its source %d times; an ID that committed must read nothing", n)
	}
	check(t, w, countSQL(tag), [][]string{{"3"}})
}

func testLoadEmpty(t *testing.T, w Warehouse, tag string) {
	id := tag + "-empty"
	res, err := w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: rowsOf(nil)})
	if err != nil {
		t.Fatalf("Load of no rows: %v", err)
	}
	diff(t, "Load of no rows", warehouse.LoadResult{}, res)
	res, err = w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, threeLines(tag, "gs://x/"+tag)...))})
	if err != nil {
		t.Fatalf("second Load: %v", err)
	}
	if !res.AlreadyLoaded {
		t.Errorf("second Load of an ID that committed with no rows: got %+v, want AlreadyLoaded", res)
	}
	check(t, w, countSQL(tag), [][]string{{"0"}})
}

func testLoadSourceFails(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/pedidos.csv"
	id := tag + "-g1"
	broken := &Source{Rows: lines(t, threeLines(tag, obj)...), FailAfter: 2}
	_, err := w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: broken})
	if !errors.Is(err, ErrBrokenSource) {
		t.Fatalf("Load from a source that fails after 2 rows: got %v, want an error wrapping %v",
			err, ErrBrokenSource)
	}
	check(t, w, countSQL(tag), [][]string{{"0"}})

	// The failed attempt must not have used up the ID.
	res, err := w.Load(t.Context(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, threeLines(tag, obj)...))})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	diff(t, "retry result", warehouse.LoadResult{Rows: 3}, res)
	check(t, w, countSQL(tag), [][]string{{"3"}})
}

func testLoadInvalidRow(t *testing.T, w Warehouse, tag string) {
	rows := lines(t, threeLines(tag, "gs://landing/"+tag+"/pedidos.csv")...)
	tbl, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		t.Fatal(err)
	}
	rows[2][tbl.Column("sku")] = warehouse.NullValue() // REQUIRED
	if _, err := w.Load(t.Context(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: rowsOf(rows)}); err == nil {
		t.Fatal("Load with NULL in a REQUIRED column succeeded, want an error")
	}
	check(t, w, countSQL(tag), [][]string{{"0"}})
}

func testLoadConcurrent(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/pedidos.csv"
	const n = 8
	var ls []line
	for i := range 50 {
		ls = append(ls, line{pedido: fmt.Sprintf("%s-P%d", tag, i), linea: 1, fecha: "2026-03-14", sku: tag + "-MOCH", cantidad: 1, precio: "1.5", pais: "ES", object: obj, gen: 7, srcLine: int64(i + 2)})
	}
	rows := lines(t, ls...)
	results := make([]warehouse.LoadResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = w.Load(t.Context(), warehouse.Load{ID: tag + "-g7", Table: warehouse.LineasPedido, Rows: rowsOf(rows)})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	counts := map[warehouse.LoadResult]int{}
	for _, r := range results {
		counts[r]++
	}
	want := map[warehouse.LoadResult]int{{Rows: 50}: 1, {AlreadyLoaded: true}: n - 1} // one appends
	diff(t, "concurrent Loads of one ID, counted by result", want, counts)
	check(t, w, countSQL(tag), [][]string{{"50"}})
}

func testLoadBadRequests(t *testing.T, w Warehouse, tag string) {
	tests := []struct {
		name string
		req  warehouse.Load
	}{
		{"unknown table", warehouse.Load{ID: tag + "-a", Table: "no_such_table", Rows: rowsOf(nil)}},
		{"empty ID", warehouse.Load{ID: "", Table: warehouse.LineasPedido, Rows: rowsOf(nil)}},
		{"ID with a slash", warehouse.Load{ID: tag + "/b", Table: warehouse.LineasPedido, Rows: rowsOf(nil)}},
		{"row of the wrong width", warehouse.Load{ID: tag + "-c", Table: warehouse.LineasPedido, Rows: rowsOf([][]warehouse.Value{{warehouse.StringValue("x")}})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if res, err := w.Load(t.Context(), tc.req); err == nil {
				t.Errorf("Load succeeded with %+v, want an error", res)
			}
		})
	}
}
