package window_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

// TestStoredJSON pins the documents a processor stores: the shape is a
// contract with data already at rest, so a change here needs a migration.
func TestStoredJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{name: "empty shard", v: window.Partial{},
			want: `{"measures":{"importe":"0","pedidos":0,"unidades":0},"epoch":0}`},
		{name: "shard", v: window.Partial{Measures: ms("179.80", 1, 2), OnTime: true, Epoch: 2,
			PendingSince: ts("2026-03-14T17:51:00Z"), MaxEventTime: ts("2026-03-14T17:42:00.5Z"), LastAccepted: ts("2026-03-14T17:51:00Z")},
			want: `{"measures":{"importe":"179.8","pedidos":1,"unidades":2},"on_time":true,"epoch":2,` +
				`"pending_since":"2026-03-14T17:51:00Z","max_event_time":"2026-03-14T17:42:00.5Z","last_accepted":"2026-03-14T17:51:00Z"}`},
		{name: "new pane state", v: window.PaneState{},
			want: `{"next_index":0,"emitted":{"importe":"0","pedidos":0,"unidades":0}}`},
		{name: "pane state", v: window.PaneState{NextIndex: 3, Emitted: ms("269.7", 2, 3), OnTime: window.OnTimeDone},
			want: `{"next_index":3,"emitted":{"importe":"269.7","pedidos":2,"unidades":3},"on_time":"DONE"}`},
		{name: "no watermark yet", v: window.WatermarkState{}, want: `{}`},
		{name: "watermark", v: window.WatermarkState{Watermark: ts("2026-03-14T17:32:00Z"),
			MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")},
			want: `{"watermark":"2026-03-14T17:32:00Z","max_event_time":"2026-03-14T17:42:00Z","last_accepted":"2026-03-14T17:51:00Z"}`},
		{name: "pane", v: *pane(2, window.TimingLate, window.Accumulating, total2, "2026-03-14T19:30:00Z", "2026-03-14T19:41:00Z"),
			want: `{"aggregation":"ventas_hora_pais","key":"ES","window_start":"2026-03-14T17:00:00Z","window_end":"2026-03-14T18:00:00Z",` +
				`"pane_index":2,"timing":"LATE","accumulation":"ACCUMULATING","measures":{"importe":"269.7","pedidos":2,"unidades":3},` +
				`"watermark":"2026-03-14T19:30:00Z","emitted_at":"2026-03-14T19:41:00Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			back, err := roundTripAny(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.v, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func roundTripAny(v any) (any, error) {
	switch v := v.(type) {
	case window.Partial:
		return roundTrip(v)
	case window.PaneState:
		return roundTrip(v)
	case window.WatermarkState:
		return roundTrip(v)
	case window.Pane:
		return roundTrip(v)
	}
	panic("unknown type")
}
