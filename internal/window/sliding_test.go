package window_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

// win is the window [start, start+size) with start in RFC 3339.
func win(start string, size time.Duration) window.Window {
	s := ts(start)
	return window.Window{Start: s, End: s.Add(size)}
}

func TestWindowsOf(t *testing.T) {
	const h, q = time.Hour, 15 * time.Minute
	tests := []struct {
		name         string
		size, period time.Duration
		t            string
		want         []window.Window
	}{
		{name: "fixed: exactly WindowOf", size: h, t: "2026-03-14T17:42:00Z",
			want: []window.Window{win("2026-03-14T17:00:00Z", h)}},
		{name: "period equal to the size is fixed", size: h, period: h, t: "2026-03-14T17:42:00Z",
			want: []window.Window{win("2026-03-14T17:00:00Z", h)}},
		{name: "1 h every 15 min: four windows, ascending", size: h, period: q, t: "2026-03-14T17:42:00Z",
			want: []window.Window{
				win("2026-03-14T16:45:00Z", h), win("2026-03-14T17:00:00Z", h),
				win("2026-03-14T17:15:00Z", h), win("2026-03-14T17:30:00Z", h)}},
		{name: "on a period start: the window starting there is the newest", size: h, period: q, t: "2026-03-14T17:45:00Z",
			want: []window.Window{
				win("2026-03-14T17:00:00Z", h), win("2026-03-14T17:15:00Z", h),
				win("2026-03-14T17:30:00Z", h), win("2026-03-14T17:45:00Z", h)}},
		{name: "last instant before a period start", size: h, period: q, t: "2026-03-14T17:44:59.999999999Z",
			want: []window.Window{
				win("2026-03-14T16:45:00Z", h), win("2026-03-14T17:00:00Z", h),
				win("2026-03-14T17:15:00Z", h), win("2026-03-14T17:30:00Z", h)}},
		{name: "seed: 18:42 in Spain", size: h, period: q, t: "2026-03-14T18:42:00+01:00",
			want: []window.Window{
				win("2026-03-14T16:45:00Z", h), win("2026-03-14T17:00:00Z", h),
				win("2026-03-14T17:15:00Z", h), win("2026-03-14T17:30:00Z", h)}},
		{name: "across the epoch", size: h, period: q, t: "1970-01-01T00:10:00Z",
			want: []window.Window{
				win("1969-12-31T23:15:00Z", h), win("1969-12-31T23:30:00Z", h),
				win("1969-12-31T23:45:00Z", h), win("1970-01-01T00:00:00Z", h)}},
		{name: "before 1970 floors, not truncates", size: h, period: q, t: "1969-12-31T22:50:00Z",
			want: []window.Window{
				win("1969-12-31T22:00:00Z", h), win("1969-12-31T22:15:00Z", h),
				win("1969-12-31T22:30:00Z", h), win("1969-12-31T22:45:00Z", h)}},
		{name: "one nanosecond before the epoch", size: h, period: 30 * time.Minute, t: "1969-12-31T23:59:59.999999999Z",
			want: []window.Window{win("1969-12-31T23:00:00Z", h), win("1969-12-31T23:30:00Z", h)}},
		{name: "periods align to the epoch, not to the hour: 21 min every 7 min", size: 21 * time.Minute, period: 7 * time.Minute,
			// 2026-03-14T17:00Z is 1773507600 s = 4222637*420 + 60: period starts at 16:59, 17:06.
			t: "2026-03-14T17:00:30Z",
			want: []window.Window{
				win("2026-03-14T16:45:00Z", 21*time.Minute), win("2026-03-14T16:52:00Z", 21*time.Minute),
				win("2026-03-14T16:59:00Z", 21*time.Minute)}},
		{name: "period of one second", size: 3 * time.Second, period: time.Second, t: "2026-03-14T17:00:00.5Z",
			want: []window.Window{
				win("2026-03-14T16:59:58Z", 3*time.Second), win("2026-03-14T16:59:59Z", 3*time.Second),
				win("2026-03-14T17:00:00Z", 3*time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			s.WindowSize, s.Period = tt.size, tt.period
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			at := ts(tt.t)
			got := s.WindowsOf(at)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WindowsOf(%s) (-want +got):\n%s", tt.t, diff)
			}
			if n := int(tt.size / s.PeriodOrSize()); len(got) != n {
				t.Errorf("%d windows, want size/period = %d", len(got), n)
			}
			for _, w := range got {
				if !w.Contains(at) || !s.IsWindowOf(w, at) {
					t.Errorf("%+v: Contains %v, IsWindowOf %v, want both true", w, w.Contains(at), s.IsWindowOf(w, at))
				}
				if w.Start.Location() != time.UTC {
					t.Errorf("window start in %v, want UTC", w.Start.Location())
				}
			}
			if newest := got[len(got)-1]; s.WindowOf(at) != newest {
				t.Errorf("WindowOf = %+v, want the newest of WindowsOf %+v", s.WindowOf(at), newest)
			}
		})
	}
}

func TestSliding(t *testing.T) {
	tests := []struct {
		name         string
		size, period time.Duration
		sliding      bool
		step         time.Duration
	}{
		{name: "fixed", size: time.Hour, sliding: false, step: time.Hour},
		{name: "period equal to the size", size: time.Hour, period: time.Hour, sliding: false, step: time.Hour},
		{name: "sliding", size: time.Hour, period: 15 * time.Minute, sliding: true, step: 15 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Spec{WindowSize: tt.size, Period: tt.period}
			if got := s.Sliding(); got != tt.sliding {
				t.Errorf("Sliding() = %v, want %v", got, tt.sliding)
			}
			if got := s.PeriodOrSize(); got != tt.step {
				t.Errorf("PeriodOrSize() = %v, want %v", got, tt.step)
			}
		})
	}
}

func TestIsWindowOf(t *testing.T) {
	s := window.Defaults()
	s.Period = 15 * time.Minute
	at := ts("2026-03-14T17:42:00Z")
	tests := []struct {
		name string
		w    window.Window
		want bool
	}{
		{name: "oldest", w: win("2026-03-14T16:45:00Z", time.Hour), want: true},
		{name: "newest", w: win("2026-03-14T17:30:00Z", time.Hour), want: true},
		{name: "in another zone, same instants", w: window.Window{
			Start: ts("2026-03-14T18:00:00+01:00"), End: ts("2026-03-14T19:00:00+01:00")}, want: true},
		{name: "ends before t", w: win("2026-03-14T16:30:00Z", time.Hour), want: false},
		{name: "starts after t", w: win("2026-03-14T17:45:00Z", time.Hour), want: false},
		{name: "not on a period start", w: win("2026-03-14T17:05:00Z", time.Hour), want: false},
		{name: "wrong size", w: win("2026-03-14T17:30:00Z", 30*time.Minute), want: false},
		{name: "sub-second start", w: window.Window{
			Start: ts("2026-03-14T17:30:00.5Z"), End: ts("2026-03-14T18:30:00.5Z")}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.IsWindowOf(tt.w, at); got != tt.want {
				t.Errorf("IsWindowOf(%+v, %s) = %v, want %v", tt.w, at, got, tt.want)
			}
		})
	}
}

func TestAcceptWindow(t *testing.T) {
	sliding := window.Defaults()
	sliding.Period = 15 * time.Minute
	base := order("P-1", "MOCH-40L-AZ", "2026-03-14T17:42:00Z", "179.80", 2)
	with := func(w window.Window) window.Order { o := base; o.Window = w; return o }
	now := ts("2026-03-14T19:55:00Z")
	tests := []struct {
		name    string
		spec    window.Spec
		o       window.Order
		wm      string
		onTime  bool
		wantErr string
	}{
		{name: "fixed, zero window: WindowOf, as before", spec: window.Defaults(), o: base,
			wm: "2026-03-14T17:30:00Z", onTime: true},
		{name: "fixed, its window given", spec: window.Defaults(), o: with(win("2026-03-14T17:00:00Z", time.Hour)),
			wm: "2026-03-14T17:30:00Z", onTime: true},
		{name: "sliding, zero window is the newest", spec: sliding, o: base,
			wm: "2026-03-14T18:15:00Z", onTime: true},
		{name: "sliding, a newer window is on time while an older one is late", spec: sliding,
			o: with(win("2026-03-14T17:30:00Z", time.Hour)), wm: "2026-03-14T18:00:00Z", onTime: true},
		{name: "sliding, the oldest window is late", spec: sliding,
			o: with(win("2026-03-14T16:45:00Z", time.Hour)), wm: "2026-03-14T18:00:00Z", onTime: false},
		{name: "sliding, the oldest window is too late while the newest counts", spec: sliding,
			o: with(win("2026-03-14T16:45:00Z", time.Hour)), wm: "2026-03-14T19:45:00Z",
			wantErr: "accept order P-1: window 2026-03-14T16:45:00Z is too late at watermark 2026-03-14T19:45:00Z"},
		{name: "sliding, the newest window at the same watermark is late but counts", spec: sliding,
			o: with(win("2026-03-14T17:30:00Z", time.Hour)), wm: "2026-03-14T19:45:00Z", onTime: false},
		{name: "a window not holding the event time is refused", spec: sliding,
			o: with(win("2026-03-14T17:45:00Z", time.Hour)), wm: "2026-03-14T17:30:00Z",
			wantErr: "accept order P-1: window [2026-03-14T17:45:00Z, 2026-03-14T18:45:00Z) is not a window of ventas_hora_pais event time 2026-03-14T17:42:00Z"},
		{name: "a window off the period grid is refused", spec: sliding,
			o: with(win("2026-03-14T17:05:00Z", time.Hour)), wm: "2026-03-14T17:30:00Z",
			wantErr: "is not a window of"},
		{name: "a sliding window under a fixed spec is refused", spec: window.Defaults(),
			o: with(win("2026-03-14T17:30:00Z", time.Hour)), wm: "2026-03-14T17:30:00Z",
			wantErr: "is not a window of"},
		{name: "a window of the wrong size is refused", spec: sliding,
			o: with(win("2026-03-14T17:30:00Z", 15*time.Minute)), wm: "2026-03-14T17:30:00Z",
			wantErr: "is not a window of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.spec.Accept(window.Partial{}, window.PaneState{}, tt.o, ts(tt.wm), now)
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("Accept error = %v, want %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(window.Partial{}, got); diff != "" {
					t.Errorf("a refused order changed the shard (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Accept: %v", err)
			}
			want := window.Partial{Measures: ms("179.8", 1, 2), OnTime: tt.onTime, PendingSince: now,
				MaxEventTime: ts("2026-03-14T17:42:00Z"), LastAccepted: now}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Accept (-want +got):\n%s", diff)
			}
		})
	}
}
