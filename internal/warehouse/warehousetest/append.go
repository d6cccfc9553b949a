package warehousetest

import (
	"context"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// discarded is one pedidos_descartados row identified by its message id.
func discarded(t *testing.T, tag, msg, reason string, eventTime *time.Time) warehouse.Row {
	t.Helper()
	ev, ws := warehouse.NullValue(), warehouse.NullValue()
	pedido := warehouse.NullValue()
	if eventTime != nil {
		ev = warehouse.TimeValue(*eventTime)
		ws = warehouse.TimeValue(eventTime.Truncate(time.Hour))
		pedido = warehouse.StringValue(tag + "-" + msg)
	}
	return warehouse.Row{ID: tag + "-" + msg, Values: rowOf(t, warehouse.PedidosDescartados, map[string]warehouse.Value{
		"pedido_id":    pedido,
		"aggregation":  warehouse.StringValue(tag),
		"reason":       warehouse.StringValue(reason),
		"event_time":   ev,
		"window_start": ws,
		"watermark":    warehouse.TimeValue(ts(t, "2026-03-14T21:00:00Z")),
		"received_at":  warehouse.TimeValue(ts(t, "2026-03-14T21:30:05.5Z")),
		"message_id":   warehouse.StringValue(msg),
		"raw":          warehouse.StringValue(`{"pedido_id":"x"}`),
	})}
}

func testAppendIgnoresRepeats(t *testing.T, w Warehouse) {
	ctx := context.Background()
	tag := newTag(t)
	late := ts(t, "2026-03-14T18:42:00Z")
	m1 := discarded(t, tag, "m1", "too_late", &late)
	m2 := discarded(t, tag, "m2", "invalid: bad JSON", nil)
	m3 := discarded(t, tag, "m3", "invalid: missing pedido_id", nil)
	if err := w.Append(ctx, warehouse.PedidosDescartados, []warehouse.Row{m1, m2}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	// A retry of m2 together with a new row, which also arrives twice.
	if err := w.Append(ctx, warehouse.PedidosDescartados, []warehouse.Row{m2, m3, m3}); err != nil {
		t.Fatalf("Append retry: %v", err)
	}
	if err := w.Append(ctx, warehouse.PedidosDescartados, nil); err != nil {
		t.Errorf("Append of no rows: %v", err)
	}
	// An engine that keeps repeated rows still must keep their values.
	distinct := ""
	if defect := defectsOf(w).InsertIDIgnored; defect != "" {
		defectsOf(w).note(t, defect)
		distinct = "DISTINCT "
	}
	check(t, w, "SELECT "+distinct+"message_id, reason, pedido_id, event_time, window_start, received_at FROM pedidos_descartados"+
		" WHERE aggregation = '"+tag+"' ORDER BY message_id", [][]string{
		{"m1", "too_late", tag + "-m1", "2026-03-14T18:42:00Z", "2026-03-14T18:00:00Z", "2026-03-14T21:30:05.5Z"},
		{"m2", "invalid: bad JSON", "NULL", "NULL", "NULL", "2026-03-14T21:30:05.5Z"},
		{"m3", "invalid: missing pedido_id", "NULL", "NULL", "NULL", "2026-03-14T21:30:05.5Z"},
	})

	// Row IDs are per table: the same ID in another table is another row.
	p := pane(t, tag, warehouse.Accumulating, "2026-03-14T18:00:00Z", "ES", 0, "EARLY", "1", 1, 1)
	p.ID = m1.ID
	if err := w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{p}); err != nil {
		t.Fatalf("Append pane: %v", err)
	}
	check(t, w, "SELECT COUNT(*) FROM ventas_hora_pais_paneles WHERE aggregation = '"+tag+"'", [][]string{{"1"}})

	if err := w.Append(ctx, "no_such_table", []warehouse.Row{m1}); err == nil {
		t.Error("Append to an unknown table succeeded, want an error")
	}
}
