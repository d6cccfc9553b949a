package warehousetest

import (
	"testing"
)

// testQueryReadOnly: Query refuses anything but a single SELECT; each
// statement touches this test's rows only.
func testQueryReadOnly(t *testing.T, w Warehouse, tag string) {
	load(t, w, tag+"-g1", threeLines(tag, "gs://landing/"+tag+"/pedidos.csv")...)
	for _, sql := range []string{
		"DELETE FROM lineas_pedido WHERE pedido_id LIKE '" + tag + "-%'",
		"UPDATE lineas_pedido SET cantidad = 0 WHERE pedido_id LIKE '" + tag + "-%'",
		"SELECT 1; DELETE FROM lineas_pedido WHERE pedido_id LIKE '" + tag + "-%'",
	} {
		if res, err := w.Query(t.Context(), sql); err == nil {
			t.Errorf("Query(%q) = %v, want it refused", sql, res)
		}
	}
	check(t, w, "SELECT COUNT(*), SUM(cantidad) FROM lineas_pedido WHERE pedido_id LIKE '"+tag+"-%'", [][]string{{"3", "6"}})
}
