package warehousetest

import (
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func testAppendIgnoresRepeats(t *testing.T, w Warehouse, tag string) {
	late, received := ts(t, "2026-03-14T18:42:00Z"), ts(t, "2026-03-14T21:30:05.5Z")
	m1 := drop{id: tag + "-m1", pedido: tag + "-p1", aggregation: tag, reason: "too_late", event: late,
		window: late.Truncate(time.Hour), received: received}.row(t)
	m2 := drop{id: tag + "-m2", aggregation: tag, reason: "invalid: bad JSON", received: received}.row(t)
	// m3's reason holds a quote and a NUL, which DuckDB's INSERT must spell out.
	m3 := drop{id: tag + "-m3", aggregation: tag, reason: "o'x\x00y", received: received}.row(t)
	add(t, w, warehouse.PedidosDescartados, m1, m2)
	// A retry of m2 together with a new row, which also arrives twice.
	add(t, w, warehouse.PedidosDescartados, m2, m3, m3)
	if err := w.Append(t.Context(), warehouse.PedidosDescartados, nil); err != nil {
		t.Errorf("Append of no rows: %v", err)
	}
	check(t, w, "SELECT message_id, reason, pedido_id, event_time, window_start, received_at FROM pedidos_descartados"+
		" WHERE aggregation = '"+tag+"' ORDER BY message_id", [][]string{
		{tag + "-m1", "too_late", tag + "-p1", "2026-03-14T18:42:00Z", "2026-03-14T18:00:00Z", "2026-03-14T21:30:05.5Z"},
		{tag + "-m2", "invalid: bad JSON", "NULL", "NULL", "NULL", "2026-03-14T21:30:05.5Z"},
		{tag + "-m3", "o'x\x00y", "NULL", "NULL", "NULL", "2026-03-14T21:30:05.5Z"},
	})

	// Row IDs are per table: the same ID in another table is another row.
	p := pane(t, tag, warehouse.Accumulating, "2026-03-14T18:00:00Z", "ES", 0, "EARLY", "1", 1, 1)
	p.ID = m1.ID
	add(t, w, warehouse.VentasHoraPaisPaneles, p)
	check(t, w, "SELECT COUNT(*) FROM ventas_hora_pais_paneles WHERE aggregation = '"+tag+"'", [][]string{{"1"}})

	if err := w.Append(t.Context(), "no_such_table", []warehouse.Row{m1}); err == nil {
		t.Error("Append to an unknown table succeeded, want an error")
	}
}
