package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// getJSON answers GET /api/dashboard?query as generic JSON, so that a
// field the page needs and the API lacks fails as a difference.
func getJSON(t *testing.T, h http.Handler, query string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath+query, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s%s: HTTP %d: %s", dashboard.APIPath, query, rec.Code, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// skuColumns are the SKU view's columns but aggregation.
var skuColumns = []string{"window_start", "window_end", "sku", "importe", "pedidos", "unidades", "timing", "pane_index"}

// startTime is the lower bound on window_start of the bars read: the
// partitioning column's bound, what BigQuery bills.
func startTime(t *testing.T, wh *fakeWarehouse) string {
	t.Helper()
	for _, s := range wh.stmts {
		if s.Name() != "discard_summary" {
			if p, ok := s.Param("start_time"); ok {
				return p.Values[0].Time.Format(time.RFC3339)
			}
		}
	}
	t.Fatalf("no bars read among %d statements", len(wh.stmts))
	return ""
}

// TestDefaultRangeFollowsTheData: without ?from the range is the 24 h up
// to the end of the newest window holding M (the newest event time the
// stream accepted), not processing time: the sample story of 14 March,
// published with a wall clock of December, is what the page shows. The
// read stays bounded on window_start.
func TestDefaultRangeFollowsTheData(t *testing.T) {
	december := time.Date(2026, 12, 2, 7, 34, 0, 0, time.UTC)
	m := time.Date(2026, 3, 14, 18, 5, 0, 0, time.UTC)
	upToM := map[string]any{"from": "2026-03-13T19:00:00Z", "until": "2026-03-14T19:00:00Z", "last_hours": 24.0, "newest": true}
	tests := []struct {
		name, query   string
		aggregation   string
		maxEventTime  time.Time
		wantRange     map[string]any
		wantStartTime string
	}{
		{
			name: "fixed hours: up to the end of M's hour", aggregation: "ventas_hora_pais", maxEventTime: m,
			wantRange: upToM, wantStartTime: "2026-03-13T19:00:00Z",
		},
		{
			name: "sliding: up to the end of the newest window holding M", query: "?aggregation=ventas_sku_hora_movil",
			aggregation: "ventas_sku_hora_movil", maxEventTime: m,
			wantRange: upToM, wantStartTime: "2026-03-13T19:00:00Z",
		},
		{
			name: "no order accepted yet: the last 24 h of processing time", aggregation: "ventas_hora_pais",
			wantRange:     map[string]any{"from": "2026-12-01T07:34:00Z", "until": nil, "last_hours": 24.0},
			wantStartTime: "2026-12-01T07:34:00Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := goodRows[:2]
			wh := &fakeWarehouse{res: viewResult(rows...)}
			if tt.aggregation != "ventas_hora_pais" {
				wh.res.Columns = skuColumns
			}
			h := dashboard.Handler(dashboard.Source{
				Warehouse:    wh,
				Stream:       fakeStream{st: stream.AggregationStatus{Aggregation: tt.aggregation, Watermark: m.Add(-10 * time.Minute), MaxEventTime: tt.maxEventTime}},
				Now:          func() time.Time { return december },
				Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"},
			})
			got := getJSON(t, h, tt.query)
			if diff := cmp.Diff(tt.wantRange, got["range"]); diff != "" {
				t.Errorf("range (-want +got):\n%s", diff)
			}
			if got := startTime(t, wh); got != tt.wantStartTime {
				t.Errorf("bars read from window_start >= %s, want %s", got, tt.wantStartTime)
			}
			if n := len(got["bars"].([]any)); n != len(rows) {
				t.Errorf("%d bars, want %d", n, len(rows))
			}
		})
	}
}

// TestSnapshotDeclaresTheAggregation: the page's labels, cards and filter
// come from the chosen aggregation's declaration (its key and window), and
// its key picker from the keys present, the largest first.
func TestSnapshotDeclaresTheAggregation(t *testing.T) {
	skuRows := [][]string{
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "CAL-TREK-42", "10.00", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:00:00Z", "2026-03-14T18:00:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "ON_TIME", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "MOCH-40L-AZ", "89.90", "1", "1", "EARLY", "0"},
		{"2026-03-14T17:15:00Z", "2026-03-14T18:15:00Z", "CET-MERINO", "30.00", "1", "1", "EARLY", "0"},
	}
	tests := []struct {
		name, query string
		res         warehouse.Result
		want        map[string]any
	}{
		{
			name: "fixed hours by country", res: viewResult(goodRows...),
			want: map[string]any{
				"key":    "pais",
				"window": map[string]any{"kind": "fixed", "size_seconds": 3600.0, "period_seconds": 3600.0},
				"keys":   []any{"ES", "PT", "FR"},
			},
		},
		{
			name: "sliding hour every 15 minutes by SKU", query: "?aggregation=ventas_sku_hora_movil",
			res: warehouse.Result{Columns: skuColumns, Rows: skuRows},
			want: map[string]any{
				"key":    "sku",
				"window": map[string]any{"kind": "sliding", "size_seconds": 3600.0, "period_seconds": 900.0},
				"keys":   []any{"MOCH-40L-AZ", "CET-MERINO", "CAL-TREK-42"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := dashboard.Handler(dashboard.Source{
				Warehouse:    &fakeWarehouse{res: tt.res},
				Now:          func() time.Time { return now },
				Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"},
			})
			got := getJSON(t, h, tt.query)
			gotSome := map[string]any{"key": got["key"], "window": got["window"], "keys": got["keys"]}
			if diff := cmp.Diff(tt.want, gotSome); diff != "" {
				t.Errorf("declaration in the snapshot (-want +got):\n%s", diff)
			}
		})
	}
}
