package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The text listing, whole: what a person reads to learn what a deployment
// computes without opening the declarations.
func TestAggregationsText(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"aggregations"}, &out); err != nil {
		t.Fatal(err)
	}
	want := `sesiones_cliente: Sales per customer session: a customer's orders no more than 30 minutes apart form one session.
  window:   session, gap 30m   key: cliente_id   measures: importe, pedidos, unidades
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    sesiones_cliente_paneles   view: sesiones_cliente (accumulating)
  file:     internal/aggregation/declarations/sesiones_cliente.json

ventas_hora_pais: Sales per hour and country: the hourly dashboard.
  window:   fixed 1h   key: pais   measures: importe, pedidos, unidades
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    ventas_hora_pais_paneles   view: ventas_hora_pais (accumulating)
  file:     internal/aggregation/declarations/ventas_hora_pais.json

ventas_sku_hora_movil: Sales per SKU over the last hour, every quarter of an hour: how a campaign product is selling.
  window:   sliding 1h every 15m   key: sku   measures: importe, unidades, pedidos
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    ventas_sku_hora_movil_paneles   view: ventas_sku_hora_movil (accumulating)
  file:     internal/aggregation/declarations/ventas_sku_hora_movil.json
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The JSON listing keeps the project's one JSON style: snake_case keys,
// durations in seconds under <name>_seconds, a fixed window without a
// period, a session window with a gap and no size.
func TestAggregationsJSON(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"aggregations", "--format", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []map[string]any{
		{
			"aggregation": "sesiones_cliente", "description": "Sales per customer session: a customer's orders no more than 30 minutes apart form one session.",
			"file": "internal/aggregation/declarations/sesiones_cliente.json", "window": "session", "gap_seconds": 1800.0,
			"key": "cliente_id", "measures": []any{"importe", "pedidos", "unidades"},
			"out_of_orderness_seconds": 600.0, "idle_timeout_seconds": 300.0, "early_delay_seconds": 60.0,
			"allowed_lateness_seconds": 7200.0, "late_delay_seconds": 60.0, "accumulation": "ACCUMULATING",
			"panes_table": "sesiones_cliente_paneles", "view": "sesiones_cliente",
		},
		{
			"aggregation": "ventas_hora_pais", "description": "Sales per hour and country: the hourly dashboard.",
			"file": "internal/aggregation/declarations/ventas_hora_pais.json", "window": "fixed", "size_seconds": 3600.0,
			"key": "pais", "measures": []any{"importe", "pedidos", "unidades"},
			"out_of_orderness_seconds": 600.0, "idle_timeout_seconds": 300.0, "early_delay_seconds": 60.0,
			"allowed_lateness_seconds": 7200.0, "late_delay_seconds": 60.0, "accumulation": "ACCUMULATING",
			"panes_table": "ventas_hora_pais_paneles", "view": "ventas_hora_pais",
		},
		{
			"aggregation": "ventas_sku_hora_movil", "description": "Sales per SKU over the last hour, every quarter of an hour: how a campaign product is selling.",
			"file": "internal/aggregation/declarations/ventas_sku_hora_movil.json", "window": "sliding", "size_seconds": 3600.0, "period_seconds": 900.0,
			"key": "sku", "measures": []any{"importe", "unidades", "pedidos"},
			"out_of_orderness_seconds": 600.0, "idle_timeout_seconds": 300.0, "early_delay_seconds": 60.0,
			"allowed_lateness_seconds": 7200.0, "late_delay_seconds": 60.0, "accumulation": "ACCUMULATING",
			"panes_table": "ventas_sku_hora_movil_paneles", "view": "ventas_sku_hora_movil",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
