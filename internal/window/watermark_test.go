package window_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

func TestAdvanceWatermark(t *testing.T) {
	// Defaults: D = 10 min, I = 5 min.
	tests := []struct {
		name string
		ws   window.WatermarkState
		now  string
		want string // expected W; "" for none
	}{
		{name: "no order yet: W stays at minus infinity (Beam)", now: "2026-03-14T18:00:00Z", want: ""},
		{name: "no order yet keeps an existing W",
			ws: window.WatermarkState{Watermark: ts("2026-03-14T17:00:00Z")}, now: "2026-03-14T18:00:00Z", want: "2026-03-14T17:00:00Z"},
		{name: "first tick after an order: M - D",
			ws:  window.WatermarkState{MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")},
			now: "2026-03-14T17:52:00Z", want: "2026-03-14T17:32:00Z"},
		{name: "active source: M - D",
			ws: window.WatermarkState{Watermark: ts("2026-03-14T17:20:00Z"),
				MaxEventTime: ts("2026-03-14T17:50:00Z"), LastAccepted: ts("2026-03-14T17:55:00Z")},
			now: "2026-03-14T17:56:00Z", want: "2026-03-14T17:40:00Z"},
		{name: "never decreases when M - D is behind W",
			ws: window.WatermarkState{Watermark: ts("2026-03-14T17:45:00Z"),
				MaxEventTime: ts("2026-03-14T17:50:00Z"), LastAccepted: ts("2026-03-14T17:55:00Z")},
			now: "2026-03-14T17:56:00Z", want: "2026-03-14T17:45:00Z"},
		{name: "future-dated clock: M is capped at now",
			ws:  window.WatermarkState{MaxEventTime: ts("2026-03-14T19:00:00Z"), LastAccepted: ts("2026-03-14T17:55:00Z")},
			now: "2026-03-14T17:56:00Z", want: "2026-03-14T17:46:00Z"},
		{name: "idle for exactly I: now - D",
			ws:  window.WatermarkState{MaxEventTime: ts("2026-03-14T17:00:00Z"), LastAccepted: ts("2026-03-14T17:55:00Z")},
			now: "2026-03-14T18:00:00Z", want: "2026-03-14T17:50:00Z"},
		{name: "one nanosecond short of idle: M - D",
			ws:  window.WatermarkState{MaxEventTime: ts("2026-03-14T17:00:00Z"), LastAccepted: ts("2026-03-14T17:55:00Z")},
			now: "2026-03-14T17:59:59.999999999Z", want: "2026-03-14T16:50:00Z"},
		{name: "the night: idle keeps advancing with processing time",
			ws: window.WatermarkState{Watermark: ts("2026-03-14T23:00:00Z"),
				MaxEventTime: ts("2026-03-14T23:05:00Z"), LastAccepted: ts("2026-03-14T23:06:00Z")},
			now: "2026-03-15T03:00:00Z", want: "2026-03-15T02:50:00Z"},
		{name: "last accepted in the future (skewed instance) is not idle",
			ws:  window.WatermarkState{MaxEventTime: ts("2026-03-14T17:00:00Z"), LastAccepted: ts("2026-03-14T18:30:00Z")},
			now: "2026-03-14T18:00:00Z", want: "2026-03-14T16:50:00Z"},
		{name: "acceptance without event time holds W",
			ws:  window.WatermarkState{Watermark: ts("2026-03-14T16:00:00Z"), LastAccepted: ts("2026-03-14T17:59:00Z")},
			now: "2026-03-14T18:00:00Z", want: "2026-03-14T16:00:00Z"},
		{name: "processing time going back never moves W back",
			ws: window.WatermarkState{Watermark: ts("2026-03-14T17:50:00Z"),
				MaxEventTime: ts("2026-03-14T18:00:00Z"), LastAccepted: ts("2026-03-14T17:00:00Z")},
			now: "2026-03-14T17:30:00Z", want: "2026-03-14T17:50:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			got := s.AdvanceWatermark(tt.ws, ts(tt.now))
			want := tt.ws
			want.Watermark = time.Time{}
			if tt.want != "" {
				want.Watermark = ts(tt.want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("AdvanceWatermark (-want +got):\n%s", diff)
			}
			if again := s.AdvanceWatermark(got, ts(tt.now)); again != got {
				t.Errorf("re-running the tick moved W from %v to %v", got.Watermark, again.Watermark)
			}
		})
	}
}

func TestAdvanceWatermarkNoOutOfOrderness(t *testing.T) {
	s := window.Defaults()
	s.OutOfOrderness = 0
	ws := window.WatermarkState{MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")}
	if got := s.AdvanceWatermark(ws, ts("2026-03-14T17:52:00Z")).Watermark; !got.Equal(ts("2026-03-14T17:42:00Z")) {
		t.Errorf("W = %v, want M itself", got)
	}
}

func TestObserve(t *testing.T) {
	base := window.WatermarkState{
		Watermark:    ts("2026-03-14T17:00:00Z"),
		MaxEventTime: ts("2026-03-14T17:30:00Z"),
		LastAccepted: ts("2026-03-14T17:40:00Z"),
	}
	tests := []struct {
		name                string
		ws                  window.WatermarkState
		maxEvent, lastAccep time.Time
		want                window.WatermarkState
	}{
		{name: "from nothing", maxEvent: ts("2026-03-14T17:30:00Z"), lastAccep: ts("2026-03-14T17:40:00Z"),
			want: window.WatermarkState{MaxEventTime: ts("2026-03-14T17:30:00Z"), LastAccepted: ts("2026-03-14T17:40:00Z")}},
		{name: "older values change nothing", ws: base,
			maxEvent: ts("2026-03-14T17:00:00Z"), lastAccep: ts("2026-03-14T17:10:00Z"), want: base},
		{name: "zero values (an empty shard) change nothing", ws: base, want: base},
		{name: "newer values move both forward", ws: base,
			maxEvent: ts("2026-03-14T18:35:00+01:00"), lastAccep: ts("2026-03-14T17:45:00Z"),
			want: window.WatermarkState{Watermark: base.Watermark,
				MaxEventTime: ts("2026-03-14T17:35:00Z"), LastAccepted: ts("2026-03-14T17:45:00Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.ws.Observe(tt.maxEvent, tt.lastAccep)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}
