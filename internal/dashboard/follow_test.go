package dashboard_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// skuColumns are the SKU view's columns but aggregation.
var skuColumns = []string{"window_start", "window_end", "sku", "importe", "pedidos", "unidades", "timing", "pane_index"}

// TestSlidingSnapshot: on a sliding aggregation (a 1 h window every 15
// minutes, keyed by SKU) the default range is the 24 h up to the end of the
// newest window holding M (the newest event time the stream accepted), not
// processing time, so the sample story of 14 March published with a wall
// clock of December is what the page shows, and the read stays bounded on
// window_start. The page's labels come from the declaration (its key and
// window) and its key picker from the keys present, the largest first.
// The fixed hourly ventas_hora_pais is TestSnapshotOnRealEngines'; before
// any order, TestFilterInQuery's default view.
func TestSlidingSnapshot(t *testing.T) {
	december := time.Date(2026, 12, 2, 7, 34, 0, 0, time.UTC)
	m := time.Date(2026, 3, 14, 18, 5, 0, 0, time.UTC)
	wh := &fakeWarehouse{res: warehouse.Result{Columns: skuColumns, Rows: [][]string{
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "CAL-TREK-42", "10.00", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "EARLY", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "CET-MERINO", "30.00", "1", "1", "EARLY", "0"},
	}}}
	h := dashboard.Handler(dashboard.Source{
		Warehouse:    wh,
		Stream:       fakeStream{st: stream.AggregationStatus{Aggregation: "ventas_sku_hora_movil", Watermark: m.Add(-10 * time.Minute), MaxEventTime: m}},
		Now:          func() time.Time { return december },
		Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"},
	})
	// As generic JSON, so that a field the page needs and the API lacks
	// fails as a difference.
	var got map[string]any
	_, body := getSnapshot(t, h, "?aggregation=ventas_sku_hora_movil")
	check(t, json.Unmarshal(body, &got))
	want := map[string]any{
		"range":  map[string]any{"from": "2026-03-13T19:00:00Z", "until": "2026-03-14T19:00:00Z", "last_hours": 24.0, "newest": true},
		"key":    "sku",
		"window": map[string]any{"kind": "sliding", "size_seconds": 3600.0, "period_seconds": 900.0},
		"keys":   []any{"MOCH-40L-AZ", "CET-MERINO", "CAL-TREK-42"},
		"bars":   4,
	}
	gotSome := map[string]any{"range": got["range"], "key": got["key"], "window": got["window"], "keys": got["keys"], "bars": len(got["bars"].([]any))}
	if diff := cmp.Diff(want, gotSome); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if got := params(t, wh, "newest_windows:ventas_sku_hora_movil")["start_time"][0]; got != "2026-03-13T19:00:00Z" {
		t.Errorf("bars read from window_start >= %s, want 2026-03-13T19:00:00Z", got)
	}
}
