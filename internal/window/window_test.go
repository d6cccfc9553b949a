package window_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

// ts parses an RFC 3339 time; "" is the zero time (no watermark yet).
func ts(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestWindowOf(t *testing.T) {
	tests := []struct {
		name       string
		size       time.Duration
		t          time.Time
		start, end string
	}{
		{name: "seed: 18:42 local time is in the 18:00-19:00 window", size: time.Hour,
			t: ts("2026-03-14T18:42:00+01:00"), start: "2026-03-14T17:00:00Z", end: "2026-03-14T18:00:00Z"},
		{name: "start is inclusive", size: time.Hour,
			t: ts("2026-03-14T17:00:00Z"), start: "2026-03-14T17:00:00Z", end: "2026-03-14T18:00:00Z"},
		{name: "end is exclusive", size: time.Hour,
			t: ts("2026-03-14T17:59:59.999999999Z"), start: "2026-03-14T17:00:00Z", end: "2026-03-14T18:00:00Z"},
		{name: "half-hour time zone", size: time.Hour,
			t: ts("2026-03-14T10:15:00+05:30"), start: "2026-03-14T04:00:00Z", end: "2026-03-14T05:00:00Z"},
		{name: "the epoch", size: time.Hour,
			t: ts("1970-01-01T00:00:00Z"), start: "1970-01-01T00:00:00Z", end: "1970-01-01T01:00:00Z"},
		{name: "one nanosecond before the epoch", size: time.Hour,
			t: ts("1969-12-31T23:59:59.999999999Z"), start: "1969-12-31T23:00:00Z", end: "1970-01-01T00:00:00Z"},
		{name: "before 1970 floors, not truncates", size: time.Hour,
			t: ts("1969-12-31T22:30:00Z"), start: "1969-12-31T22:00:00Z", end: "1969-12-31T23:00:00Z"},
		{name: "before 1970 on a boundary", size: time.Hour,
			t: ts("1969-07-20T20:00:00Z"), start: "1969-07-20T20:00:00Z", end: "1969-07-20T21:00:00Z"},
		{name: "7 minute windows align to the epoch, not to the hour", size: 7 * time.Minute,
			// 2026-03-14T17:00Z is 1773507600 s = 4222637*420 + 60.
			t: ts("2026-03-14T17:00:30Z"), start: "2026-03-14T16:59:00Z", end: "2026-03-14T17:06:00Z"},
		{name: "7 minute windows before 1970", size: 7 * time.Minute,
			t: ts("1969-12-31T23:59:00Z"), start: "1969-12-31T23:53:00Z", end: "1970-01-01T00:00:00Z"},
		{name: "90 second windows", size: 90 * time.Second,
			t: ts("2026-03-14T17:01:29Z"), start: "2026-03-14T17:00:00Z", end: "2026-03-14T17:01:30Z"},
		{name: "25 hour windows do not follow days", size: 25 * time.Hour,
			t: ts("1970-01-02T01:30:00Z"), start: "1970-01-02T01:00:00Z", end: "1970-01-03T02:00:00Z"},
		{name: "25 hour windows, first one", size: 25 * time.Hour,
			t: ts("1970-01-02T00:59:59Z"), start: "1970-01-01T00:00:00Z", end: "1970-01-02T01:00:00Z"},
		{name: "far past", size: time.Hour,
			t: ts("1000-06-01T12:34:56Z"), start: "1000-06-01T12:00:00Z", end: "1000-06-01T13:00:00Z"},
		{name: "far future", size: 24 * time.Hour,
			t: ts("3000-01-01T23:59:59Z"), start: "3000-01-01T00:00:00Z", end: "3000-01-02T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			s.WindowSize = tt.size
			got := s.WindowOf(tt.t)
			want := window.Window{Start: ts(tt.start), End: ts(tt.end)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("WindowOf(%s) (-want +got):\n%s", tt.t, diff)
			}
			if !got.Contains(tt.t) {
				t.Errorf("%+v does not contain %s", got, tt.t)
			}
			if got.Start.Location() != time.UTC {
				t.Errorf("window start in %v, want UTC", got.Start.Location())
			}
			if got != want {
				t.Errorf("window %+v is not == %+v: unusable as a map key", got, want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	w := window.Window{Start: ts("2026-03-14T17:00:00Z"), End: ts("2026-03-14T18:00:00Z")}
	tests := []struct {
		name     string
		lateness time.Duration
		wm       time.Time
		want     window.Lateness
	}{
		{name: "no watermark yet", lateness: 2 * time.Hour, want: window.OnTime},
		{name: "watermark inside the window", lateness: 2 * time.Hour, wm: ts("2026-03-14T17:30:00Z"), want: window.OnTime},
		{name: "watermark just before the end", lateness: 2 * time.Hour, wm: ts("2026-03-14T17:59:59.999999999Z"), want: window.OnTime},
		{name: "watermark at the end is late", lateness: 2 * time.Hour, wm: ts("2026-03-14T18:00:00Z"), want: window.Late},
		{name: "seed: 90 minutes late within 2 h", lateness: 2 * time.Hour, wm: ts("2026-03-14T19:30:00Z"), want: window.Late},
		{name: "just before end + L", lateness: 2 * time.Hour, wm: ts("2026-03-14T19:59:59.999999999Z"), want: window.Late},
		{name: "seed: at end + L is too late", lateness: 2 * time.Hour, wm: ts("2026-03-14T20:00:00Z"), want: window.TooLate},
		{name: "beyond end + L", lateness: 2 * time.Hour, wm: ts("2026-03-15T00:00:00Z"), want: window.TooLate},
		{name: "no lateness: at the end is too late", lateness: 0, wm: ts("2026-03-14T18:00:00Z"), want: window.TooLate},
		{name: "no lateness: before the end is on time", lateness: 0, wm: ts("2026-03-14T17:59:00Z"), want: window.OnTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			s.AllowedLateness = tt.lateness
			if got := s.Classify(w, tt.wm); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.wm, got, tt.want)
			}
		})
	}
}

func TestLatenessString(t *testing.T) {
	got := []string{window.OnTime.String(), window.Late.String(), window.TooLate.String(), window.Lateness(9).String()}
	want := []string{"on_time", "late", "too_late", "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// win is the window [start, start+size) with start in RFC 3339.
func win(start string, size time.Duration) window.Window {
	s := ts(start)
	return window.Window{Start: s, End: s.Add(size)}
}

// wins is n windows of size, the first starting at first, one period apart.
func wins(first string, n int, size, period time.Duration) []window.Window {
	ws := make([]window.Window, n)
	for i := range ws {
		start := ts(first).Add(time.Duration(i) * period)
		ws[i] = window.Window{Start: start, End: start.Add(size)}
	}
	return ws
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
			want: wins("2026-03-14T16:45:00Z", 4, h, q)},
		{name: "on a period start: the window starting there is the newest", size: h, period: q, t: "2026-03-14T17:45:00Z",
			want: wins("2026-03-14T17:00:00Z", 4, h, q)},
		{name: "last instant before a period start", size: h, period: q, t: "2026-03-14T17:44:59.999999999Z",
			want: wins("2026-03-14T16:45:00Z", 4, h, q)},
		{name: "seed: 18:42 in Spain", size: h, period: q, t: "2026-03-14T18:42:00+01:00",
			want: wins("2026-03-14T16:45:00Z", 4, h, q)},
		{name: "across the epoch", size: h, period: q, t: "1970-01-01T00:10:00Z",
			want: wins("1969-12-31T23:15:00Z", 4, h, q)},
		{name: "before 1970 floors, not truncates", size: h, period: q, t: "1969-12-31T22:50:00Z",
			want: wins("1969-12-31T22:00:00Z", 4, h, q)},
		{name: "one nanosecond before the epoch", size: h, period: 30 * time.Minute, t: "1969-12-31T23:59:59.999999999Z",
			want: []window.Window{win("1969-12-31T23:00:00Z", h), win("1969-12-31T23:30:00Z", h)}},
		{name: "periods align to the epoch, not to the hour: 21 min every 7 min", size: 21 * time.Minute, period: 7 * time.Minute,
			// 2026-03-14T17:00Z is 1773507600 s = 4222637*420 + 60: period starts at 16:59, 17:06.
			t:    "2026-03-14T17:00:30Z",
			want: wins("2026-03-14T16:45:00Z", 3, 21*time.Minute, 7*time.Minute)},
		{name: "period of one second", size: 3 * time.Second, period: time.Second, t: "2026-03-14T17:00:00.5Z",
			want: wins("2026-03-14T16:59:58Z", 3, 3*time.Second, time.Second)},
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
			// size/period windows, so PeriodOrSize is the size when fixed.
			if n := time.Duration(len(got)); n*s.PeriodOrSize() != tt.size || s.Sliding() != (n > 1) {
				t.Errorf("%d windows, PeriodOrSize() = %v, Sliding() = %v", n, s.PeriodOrSize(), s.Sliding())
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
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
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
			want.Watermark = ts(tt.want)
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

func TestDefaults(t *testing.T) {
	want := window.Spec{
		Name:            "ventas_hora_pais",
		KeyField:        "pais",
		WindowSize:      time.Hour,
		OutOfOrderness:  10 * time.Minute,
		IdleTimeout:     5 * time.Minute,
		EarlyDelay:      60 * time.Second,
		AllowedLateness: 2 * time.Hour,
		LateDelay:       time.Minute,
		Accumulation:    window.Accumulating,
	}
	if diff := cmp.Diff(want, window.Defaults()); diff != "" {
		t.Errorf("Defaults() (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*window.Spec)
		want   []string // substrings of the error, in order; nil: valid
	}{
		{name: "defaults", change: func(*window.Spec) {}},
		{name: "zero delays and lateness are allowed", change: func(s *window.Spec) {
			s.OutOfOrderness, s.EarlyDelay, s.AllowedLateness = 0, 0, 0
		}},
		{name: "late delay of one tick", change: func(s *window.Spec) { s.LateDelay = window.TickInterval }},
		{name: "discarding, 7 minute windows", change: func(s *window.Spec) {
			s.Accumulation, s.WindowSize = window.Discarding, 7*time.Minute
		}},
		{name: "sliding 1 h every 15 min", change: func(s *window.Spec) { s.Period = 15 * time.Minute }},
		{name: "period equal to the size", change: func(s *window.Spec) { s.Period = time.Hour }},
		{name: "sessions of 30 min", change: func(s *window.Spec) { s.WindowSize, s.Gap = 0, 30*time.Minute }},
		{name: "session gap with a window size", change: func(s *window.Spec) { s.Gap = 30 * time.Minute },
			want: []string{"session windows (gap 30m0s) take no window size (1h0m0s) nor period (0s)"}},
		{name: "fractional session gap", change: func(s *window.Spec) { s.WindowSize, s.Gap = 0, 1500*time.Millisecond },
			want: []string{"session gap 1.5s must be a whole number of seconds"}},
		{name: "negative period", change: func(s *window.Spec) { s.Period = -time.Minute },
			want: []string{"period -1m0s must not be negative"}},
		{name: "fractional period", change: func(s *window.Spec) { s.Period = 1500 * time.Millisecond },
			want: []string{"period 1.5s must be a whole number of seconds"}},
		{name: "period longer than the size", change: func(s *window.Spec) { s.Period = 2 * time.Hour },
			want: []string{"period 2h0m0s must not exceed the window size 1h0m0s"}},
		{name: "period not dividing the size", change: func(s *window.Spec) { s.Period = 25 * time.Minute },
			want: []string{"period 25m0s must divide the window size 1h0m0s"}},
		{name: "period of 7 s does not divide an hour", change: func(s *window.Spec) { s.Period = 7 * time.Second },
			want: []string{"period 7s must divide the window size 1h0m0s"}},
		{name: "empty name", change: func(s *window.Spec) { s.Name = "" },
			want: []string{`aggregation "": name "" must be 1-63 characters`}},
		{name: "name with a slash", change: func(s *window.Spec) { s.Name = "ventas/hora" },
			want: []string{`name "ventas/hora" must be`}},
		{name: "name with capitals", change: func(s *window.Spec) { s.Name = "Ventas" },
			want: []string{`name "Ventas" must be`}},
		{name: "key field empty", change: func(s *window.Spec) { s.KeyField = "" },
			want: []string{`key field "" must be a column name`}},
		{name: "key field collides with a pane column", change: func(s *window.Spec) { s.KeyField = "timing" },
			want: []string{`key field "timing" collides with a column of the panes table`}},
		{name: "zero window", change: func(s *window.Spec) { s.WindowSize = 0 },
			want: []string{"window size 0s must be positive"}},
		{name: "negative window", change: func(s *window.Spec) { s.WindowSize = -time.Hour },
			want: []string{"window size -1h0m0s must be positive"}},
		{name: "fractional window", change: func(s *window.Spec) { s.WindowSize = 1500 * time.Millisecond },
			want: []string{"window size 1.5s must be a whole number of seconds"}},
		{name: "negative out-of-orderness", change: func(s *window.Spec) { s.OutOfOrderness = -time.Second },
			want: []string{"out-of-orderness -1s must not be negative"}},
		{name: "zero idle timeout", change: func(s *window.Spec) { s.IdleTimeout = 0 },
			want: []string{"idle timeout 0s must be positive"}},
		{name: "negative early delay", change: func(s *window.Spec) { s.EarlyDelay = -time.Second },
			want: []string{"early delay -1s must not be negative"}},
		{name: "negative lateness", change: func(s *window.Spec) { s.AllowedLateness = -time.Second },
			want: []string{"allowed lateness -1s must not be negative"}},
		{name: "negative late delay", change: func(s *window.Spec) { s.LateDelay = -time.Second },
			want: []string{"late delay -1s must be at least the tick interval 30s"}},
		{name: "no late delay: a late change waits for a tick anyway", change: func(s *window.Spec) { s.LateDelay = 0 },
			want: []string{"late delay 0s must be at least the tick interval 30s"}},
		{name: "late delay shorter than a tick", change: func(s *window.Spec) { s.LateDelay = 29 * time.Second },
			want: []string{"late delay 29s must be at least the tick interval 30s"}},
		{name: "unknown accumulation", change: func(s *window.Spec) { s.Accumulation = "accumulating" },
			want: []string{`accumulation "accumulating" must be ACCUMULATING or DISCARDING`}},
		{name: "every problem at once", change: func(s *window.Spec) { *s = window.Spec{} },
			want: []string{"name", "key field", "window size", "idle timeout", "accumulation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			tt.change(&s)
			err := s.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error mentioning %q", tt.want)
			}
			msg := err.Error()
			for _, w := range tt.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("Validate() = %q, want it to mention %q (in order)", err, w)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}
