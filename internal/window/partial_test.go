package window_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

func order(id, key, eventTime, importe string, unidades int64) window.Order {
	return window.Order{ID: id, Key: key, EventTime: ts(eventTime),
		Measures: window.Measures{Importe: dec(importe), Pedidos: 1, Unidades: unidades}}
}

func TestAccept(t *testing.T) {
	// The window is 17:00-18:00Z (18:00-19:00 in Spain), L = 2 h.
	o := order("P-1", "ES", "2026-03-14T17:42:00Z", "179.80", 2)
	pending := window.Partial{
		Measures: ms("10", 1, 1), OnTime: true, Epoch: 2,
		PendingSince: ts("2026-03-14T17:45:00Z"),
		MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:45:00Z"),
	}
	tests := []struct {
		name    string
		sh      window.Partial
		st      window.PaneState
		o       window.Order
		wm, now string
		want    window.Partial
		wantErr string
	}{
		{name: "first order of a window, no watermark yet", o: o, now: "2026-03-14T17:51:00Z",
			want: window.Partial{Measures: ms("179.8", 1, 2), OnTime: true, Epoch: 0,
				PendingSince: ts("2026-03-14T17:51:00Z"),
				MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")}},
		{name: "a second un-emitted change keeps the first one's time",
			sh: pending, st: window.PaneState{NextIndex: 2}, o: o,
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:51:00Z",
			want: window.Partial{Measures: ms("189.8", 2, 3), OnTime: true, Epoch: 2,
				PendingSince: ts("2026-03-14T17:45:00Z"),
				MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")}},
		{name: "after a pane covered the shard, a new run of changes starts",
			sh: pending, st: window.PaneState{NextIndex: 3}, o: o,
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:51:00Z",
			want: window.Partial{Measures: ms("189.8", 2, 3), OnTime: true, Epoch: 3,
				PendingSince: ts("2026-03-14T17:51:00Z"),
				MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:51:00Z")}},
		{name: "an instance with a slower clock moves the pending time back",
			sh: pending, st: window.PaneState{NextIndex: 2}, o: o,
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:44:30Z",
			want: window.Partial{Measures: ms("189.8", 2, 3), OnTime: true, Epoch: 2,
				PendingSince: ts("2026-03-14T17:44:30Z"),
				MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:45:00Z")}},
		{name: "a late order does not mark the window on time", o: o,
			st: window.PaneState{NextIndex: 0, OnTime: window.OnTimeNever},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Partial{Measures: ms("179.8", 1, 2), OnTime: false, Epoch: 0,
				PendingSince: ts("2026-03-14T19:41:00Z"),
				MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: ts("2026-03-14T19:41:00Z")}},
		{name: "a late order keeps the flag of earlier on-time orders", sh: pending, o: o,
			st: window.PaneState{NextIndex: 3, OnTime: window.OnTimeDone},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Partial{Measures: ms("189.8", 2, 3), OnTime: true, Epoch: 3,
				PendingSince: ts("2026-03-14T19:41:00Z"),
				MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T19:41:00Z")}},
		{name: "a future-dated order raises the max event time", o: order("P-2", "ES", "2026-03-14T17:59:00Z", "1", 1),
			wm: "2026-03-14T16:30:00Z", now: "2026-03-14T17:20:00Z",
			want: window.Partial{Measures: ms("1", 1, 1), OnTime: true, Epoch: 0,
				PendingSince: ts("2026-03-14T17:20:00Z"),
				MaxEventTime: ts("2026-03-14T17:59:00Z"), LastAccepted: ts("2026-03-14T17:20:00Z")}},
		{name: "too late is refused", sh: pending, o: o, wm: "2026-03-14T20:00:00Z", now: "2026-03-14T20:10:00Z",
			want: pending, wantErr: "accept order P-1: window 2026-03-14T17:00:00Z is too late at watermark 2026-03-14T20:00:00Z"},
		{name: "overflow is refused", o: o, now: "2026-03-14T17:51:00Z",
			sh:      window.Partial{Measures: window.Measures{Importe: numeric.Max()}},
			want:    window.Partial{Measures: window.Measures{Importe: numeric.Max()}},
			wantErr: "accept order P-1: importe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var wm time.Time
			if tt.wm != "" {
				wm = ts(tt.wm)
			}
			got, err := window.Defaults().Accept(tt.sh, tt.st, tt.o, wm, ts(tt.now))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Accept: %v", err)
			case tt.wantErr != "" && (err == nil || !contains(err.Error(), tt.wantErr)):
				t.Fatalf("Accept error = %v, want %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Accept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name    string
		st      window.PaneState
		shards  []window.Partial
		want    window.Content
		wantErr bool
	}{
		{name: "no shards", want: window.Content{}},
		{name: "empty shards", shards: make([]window.Partial, 8), want: window.Content{}},
		{name: "sums, earliest pending, any on time, maxima",
			st: window.PaneState{NextIndex: 1},
			shards: []window.Partial{
				{Measures: ms("1.5", 1, 2), OnTime: false, Epoch: 1, PendingSince: ts("2026-03-14T17:50:00Z"),
					MaxEventTime: ts("2026-03-14T17:40:00Z"), LastAccepted: ts("2026-03-14T17:50:00Z")},
				{},
				{Measures: ms("2.25", 2, 1), OnTime: true, Epoch: 1, PendingSince: ts("2026-03-14T17:45:00Z"),
					MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:49:00Z")},
			},
			want: window.Content{Total: ms("3.75", 3, 3), FirstPending: ts("2026-03-14T17:45:00Z"), OnTime: true,
				MaxEventTime: ts("2026-03-14T17:44:00Z"), LastAccepted: ts("2026-03-14T17:50:00Z")}},
		{name: "changes of an earlier epoch were emitted",
			st: window.PaneState{NextIndex: 2, Emitted: ms("3.75", 3, 3)},
			shards: []window.Partial{
				{Measures: ms("1.5", 1, 2), Epoch: 1, PendingSince: ts("2026-03-14T17:45:00Z"),
					MaxEventTime: ts("2026-03-14T17:40:00Z"), LastAccepted: ts("2026-03-14T17:45:00Z")},
				{Measures: ms("2.25", 2, 1), Epoch: 0, PendingSince: ts("2026-03-14T17:05:00Z"),
					MaxEventTime: ts("2026-03-14T17:04:00Z"), LastAccepted: ts("2026-03-14T17:05:00Z")},
			},
			want: window.Content{Total: ms("3.75", 3, 3),
				MaxEventTime: ts("2026-03-14T17:40:00Z"), LastAccepted: ts("2026-03-14T17:45:00Z")}},
		{name: "overflow", shards: []window.Partial{
			{Measures: window.Measures{Pedidos: math.MaxInt64}}, {Measures: window.Measures{Pedidos: 1}}},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := window.Combine(tt.st, tt.shards)
			if tt.wantErr {
				if !errors.Is(err, window.ErrOverflow) {
					t.Fatalf("Combine error = %v, want ErrOverflow", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Combine: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Combine (-want +got):\n%s", diff)
			}
		})
	}
}
