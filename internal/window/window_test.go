package window_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

// clk parses an RFC 3339 time, or "hh:mm" or "hh:mm:ss[.fff]" as UTC on
// 2026-03-14; "" is the zero time (no watermark yet).
func clk(s string) time.Time {
	switch {
	case s == "":
		return time.Time{}
	case len(s) == 5:
		s = "2026-03-14T" + s + ":00Z"
	case !strings.Contains(s, "T"):
		s = "2026-03-14T" + s + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestClassify(t *testing.T) {
	w := window.Window{Start: clk("17:00"), End: clk("18:00")}
	tests := []struct {
		name     string
		lateness time.Duration
		wm       string
		want     window.Lateness
	}{
		{"no watermark yet", 2 * time.Hour, "", window.OnTime},
		{"watermark inside the window", 2 * time.Hour, "17:30", window.OnTime},
		{"watermark just before the end", 2 * time.Hour, "17:59:59.999999999", window.OnTime},
		{"watermark at the end is late", 2 * time.Hour, "18:00", window.Late},
		{"seed: 90 minutes late within 2 h", 2 * time.Hour, "19:30", window.Late},
		{"just before end + L", 2 * time.Hour, "19:59:59.999999999", window.Late},
		{"seed: at end + L is too late", 2 * time.Hour, "20:00", window.TooLate},
		{"beyond end + L", 2 * time.Hour, "2026-03-15T00:00:00Z", window.TooLate},
		{"no lateness: at the end is too late", 0, "18:00", window.TooLate},
		{"no lateness: before the end is on time", 0, "17:59", window.OnTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			s.AllowedLateness = tt.lateness
			if got := s.Classify(w, clk(tt.wm)); got != tt.want {
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

// wins is n windows of size, the first starting at first, one period apart.
func wins(first string, n int, size, period time.Duration) []window.Window {
	ws := make([]window.Window, n)
	for i := range ws {
		start := clk(first).Add(time.Duration(i) * period)
		ws[i] = window.Window{Start: start, End: start.Add(size)}
	}
	return ws
}

// TestWindowsOf holds WindowOf to the newest of WindowsOf, whose windows
// are in UTC and == to the expected ones, so that they can key a map.
func TestWindowsOf(t *testing.T) {
	const h, q = time.Hour, 15 * time.Minute
	fixed := func(start string, size time.Duration) []window.Window {
		return wins(start, 1, size, size)
	}
	tests := []struct {
		name         string
		size, period time.Duration
		t            string
		want         []window.Window
	}{
		{"seed: 18:42 local time is in the 18:00-19:00 window", h, 0, "2026-03-14T18:42:00+01:00",
			fixed("2026-03-14T17:00:00Z", h)},
		{"start is inclusive", h, 0, "2026-03-14T17:00:00Z", fixed("2026-03-14T17:00:00Z", h)},
		{"end is exclusive", h, 0, "2026-03-14T17:59:59.999999999Z", fixed("2026-03-14T17:00:00Z", h)},
		{"half-hour time zone", h, 0, "2026-03-14T10:15:00+05:30", fixed("2026-03-14T04:00:00Z", h)},
		{"the epoch", h, 0, "1970-01-01T00:00:00Z", fixed("1970-01-01T00:00:00Z", h)},
		{"fixed: one nanosecond before the epoch", h, 0, "1969-12-31T23:59:59.999999999Z",
			fixed("1969-12-31T23:00:00Z", h)},
		{"fixed: before 1970 floors, not truncates", h, 0, "1969-12-31T22:30:00Z",
			fixed("1969-12-31T22:00:00Z", h)},
		{"before 1970 on a boundary", h, 0, "1969-07-20T20:00:00Z", fixed("1969-07-20T20:00:00Z", h)},
		// 2026-03-14T17:00Z is 1773507600 s = 4222637*420 + 60.
		{"7 minute windows align to the epoch, not to the hour", 7 * time.Minute, 0,
			"2026-03-14T17:00:30Z",
			fixed("2026-03-14T16:59:00Z", 7*time.Minute)},
		{"7 minute windows before 1970", 7 * time.Minute, 0, "1969-12-31T23:59:00Z",
			fixed("1969-12-31T23:53:00Z", 7*time.Minute)},
		{"90 second windows", 90 * time.Second, 0, "2026-03-14T17:01:29Z",
			fixed("2026-03-14T17:00:00Z", 90*time.Second)},
		{"25 hour windows do not follow days", 25 * h, 0, "1970-01-02T01:30:00Z",
			fixed("1970-01-02T01:00:00Z", 25*h)},
		{"25 hour windows, first one", 25 * h, 0, "1970-01-02T00:59:59Z",
			fixed("1970-01-01T00:00:00Z", 25*h)},
		{"far past", h, 0, "1000-06-01T12:34:56Z", fixed("1000-06-01T12:00:00Z", h)},
		{"far future", 24 * h, 0, "3000-01-01T23:59:59Z", fixed("3000-01-01T00:00:00Z", 24*h)},
		{"period equal to the size is fixed", h, h, "2026-03-14T17:42:00Z",
			fixed("2026-03-14T17:00:00Z", h)},
		{"1 h every 15 min: four windows, ascending", h, q, "2026-03-14T17:42:00Z", wins("2026-03-14T16:45:00Z", 4, h, q)},
		{"on a period start: the window starting there is the newest", h, q, "2026-03-14T17:45:00Z",
			wins("2026-03-14T17:00:00Z", 4, h, q)},
		{"last instant before a period start", h, q, "2026-03-14T17:44:59.999999999Z", wins("2026-03-14T16:45:00Z", 4, h, q)},
		{"seed: 18:42 in Spain", h, q, "2026-03-14T18:42:00+01:00", wins("2026-03-14T16:45:00Z", 4, h, q)},
		{"across the epoch", h, q, "1970-01-01T00:10:00Z", wins("1969-12-31T23:15:00Z", 4, h, q)},
		{"before 1970 floors, not truncates", h, q, "1969-12-31T22:50:00Z", wins("1969-12-31T22:00:00Z", 4, h, q)},
		{"one nanosecond before the epoch", h, h / 2, "1969-12-31T23:59:59.999999999Z", wins("1969-12-31T23:00:00Z", 2, h, h/2)},
		// 2026-03-14T17:00Z is 1773507600 s = 4222637*420 + 60: period starts at 16:59, 17:06.
		{"periods align to the epoch, not to the hour: 21 min every 7 min", 21 * time.Minute, 7 * time.Minute,
			"2026-03-14T17:00:30Z", wins("2026-03-14T16:45:00Z", 3, 21*time.Minute, 7*time.Minute)},
		{"period of one second", 3 * time.Second, time.Second, "2026-03-14T17:00:00.5Z",
			wins("2026-03-14T16:59:58Z", 3, 3*time.Second, time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			s.WindowSize, s.Period = tt.size, tt.period
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			at := clk(tt.t)
			got := s.WindowsOf(at)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("WindowsOf(%s) (-want +got):\n%s", tt.t, diff)
			}
			// size/period windows, so PeriodOrSize is the size when fixed.
			if n := time.Duration(len(got)); n*s.PeriodOrSize() != tt.size || s.Sliding() != (n > 1) {
				t.Errorf("%d windows, PeriodOrSize() = %v, Sliding() = %v", n, s.PeriodOrSize(), s.Sliding())
			}
			for i, w := range got {
				if !w.Contains(at) || !s.IsWindowOf(w, at) {
					t.Errorf("%+v: Contains %v, IsWindowOf %v, want both true", w, w.Contains(at), s.IsWindowOf(w, at))
				}
				if w.Start.Location() != time.UTC || w != tt.want[i] {
					t.Errorf("window %+v in %v is not == %+v in UTC: unusable as a map key",
						w, w.Start.Location(), tt.want[i])
				}
			}
			if newest := got[len(got)-1]; s.WindowOf(at) != newest {
				t.Errorf("WindowOf = %+v, want the newest of WindowsOf %+v", s.WindowOf(at), newest)
			}
		})
	}
}

// wstate is a WatermarkState of times read by clk.
func wstate(w, maxEvent, last string) window.WatermarkState {
	return window.WatermarkState{Watermark: clk(w), MaxEventTime: clk(maxEvent), LastAccepted: clk(last)}
}

func TestAdvanceWatermark(t *testing.T) {
	// Defaults: D = 10 min, I = 5 min.
	tests := []struct {
		name string
		ws   window.WatermarkState
		now  string
		want string // expected W; "" for none
	}{
		{"no order yet: W stays at minus infinity (Beam)", wstate("", "", ""), "18:00", ""},
		{"no order yet keeps an existing W", wstate("17:00", "", ""), "18:00", "17:00"},
		{"first tick after an order: M - D", wstate("", "17:42", "17:51"), "17:52", "17:32"},
		{"active source: M - D", wstate("17:20", "17:50", "17:55"), "17:56", "17:40"},
		{"never decreases when M - D is behind W", wstate("17:45", "17:50", "17:55"), "17:56", "17:45"},
		{"future-dated clock: M is capped at now", wstate("", "19:00", "17:55"), "17:56", "17:46"},
		{"idle for exactly I: now - D", wstate("", "17:00", "17:55"), "18:00", "17:50"},
		{"one nanosecond short of idle: M - D", wstate("", "17:00", "17:55"), "17:59:59.999999999", "16:50"},
		{"the night: idle keeps advancing with processing time", wstate("23:00", "23:05", "23:06"),
			"2026-03-15T03:00:00Z", "2026-03-15T02:50:00Z"},
		{"last accepted in the future (skewed instance) is not idle", wstate("", "17:00", "18:30"), "18:00", "16:50"},
		{"acceptance without event time holds W", wstate("16:00", "", "17:59"), "18:00", "16:00"},
		{"processing time going back never moves W back", wstate("17:50", "18:00", "17:00"), "17:30", "17:50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			got := s.AdvanceWatermark(tt.ws, clk(tt.now))
			want := tt.ws
			want.Watermark = clk(tt.want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("AdvanceWatermark (-want +got):\n%s", diff)
			}
			if again := s.AdvanceWatermark(got, clk(tt.now)); again != got {
				t.Errorf("re-running the tick moved W from %v to %v", got.Watermark, again.Watermark)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	base := wstate("17:00", "17:30", "17:40")
	tests := []struct {
		name               string
		ws                 window.WatermarkState
		maxEvent, accepted string
		want               window.WatermarkState
	}{
		{"from nothing", window.WatermarkState{}, "17:30", "17:40", wstate("", "17:30", "17:40")},
		{"older values change nothing", base, "17:00", "17:10", base},
		{"zero values (an empty shard) change nothing", base, "", "", base},
		{"newer values move both forward", base, "2026-03-14T18:35:00+01:00", "17:45", wstate("17:00", "17:35", "17:45")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.ws.Observe(clk(tt.maxEvent), clk(tt.accepted))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*window.Spec)
		want   string // substrings of the error, in order, separated by |; "": valid
	}{
		{"defaults", func(*window.Spec) {}, ""},
		{"zero delays and lateness are allowed", func(s *window.Spec) { s.OutOfOrderness, s.EarlyDelay, s.AllowedLateness = 0, 0, 0 }, ""},
		{"late delay of one tick", func(s *window.Spec) { s.LateDelay = window.TickInterval }, ""},
		{"discarding, 7 minute windows", func(s *window.Spec) { s.Accumulation, s.WindowSize = window.Discarding, 7*time.Minute }, ""},
		{"sliding 1 h every 15 min", func(s *window.Spec) { s.Period = 15 * time.Minute }, ""},
		{"period equal to the size", func(s *window.Spec) { s.Period = time.Hour }, ""},
		{"sessions of 30 min", func(s *window.Spec) { s.WindowSize, s.Gap = 0, 30*time.Minute }, ""},
		{"session gap with a window size", func(s *window.Spec) { s.Gap = 30 * time.Minute },
			"session windows (gap 30m0s) take no window size (1h0m0s) nor period (0s)"},
		{"fractional session gap", func(s *window.Spec) { s.WindowSize, s.Gap = 0, 1500*time.Millisecond },
			"session gap 1.5s must be a whole number of seconds"},
		{"negative period", func(s *window.Spec) { s.Period = -time.Minute }, "period -1m0s must not be negative"},
		{"fractional period", func(s *window.Spec) { s.Period = 1500 * time.Millisecond }, "period 1.5s must be a whole number of seconds"},
		{"period longer than the size", func(s *window.Spec) { s.Period = 2 * time.Hour },
			"period 2h0m0s must not exceed the window size 1h0m0s"},
		{"period not dividing the size", func(s *window.Spec) { s.Period = 25 * time.Minute }, "period 25m0s must divide the window size 1h0m0s"},
		{"period of 7 s does not divide an hour", func(s *window.Spec) { s.Period = 7 * time.Second }, "period 7s must divide the window size 1h0m0s"},
		{"empty name", func(s *window.Spec) { s.Name = "" }, `aggregation "": name "" must be 1-63 characters`},
		{"name with a slash", func(s *window.Spec) { s.Name = "ventas/hora" }, `name "ventas/hora" must be`},
		{"name with capitals", func(s *window.Spec) { s.Name = "Ventas" }, `name "Ventas" must be`},
		{"key field empty", func(s *window.Spec) { s.KeyField = "" }, `key field "" must be a column name`},
		{"key field collides with a pane column", func(s *window.Spec) { s.KeyField = "timing" },
			`key field "timing" collides with a column of the panes table`},
		{"zero window", func(s *window.Spec) { s.WindowSize = 0 }, "window size 0s must be positive"},
		{"negative window", func(s *window.Spec) { s.WindowSize = -time.Hour }, "window size -1h0m0s must be positive"},
		{"fractional window", func(s *window.Spec) { s.WindowSize = 1500 * time.Millisecond }, "window size 1.5s must be a whole number of seconds"},
		{"negative out-of-orderness", func(s *window.Spec) { s.OutOfOrderness = -time.Second }, "out-of-orderness -1s must not be negative"},
		{"zero idle timeout", func(s *window.Spec) { s.IdleTimeout = 0 }, "idle timeout 0s must be positive"},
		{"negative early delay", func(s *window.Spec) { s.EarlyDelay = -time.Second }, "early delay -1s must not be negative"},
		{"negative lateness", func(s *window.Spec) { s.AllowedLateness = -time.Second }, "allowed lateness -1s must not be negative"},
		{"negative late delay", func(s *window.Spec) { s.LateDelay = -time.Second }, "late delay -1s must be at least the tick interval 30s"},
		{"no late delay: a late change waits for a tick anyway", func(s *window.Spec) { s.LateDelay = 0 },
			"late delay 0s must be at least the tick interval 30s"},
		{"late delay shorter than a tick", func(s *window.Spec) { s.LateDelay = 29 * time.Second },
			"late delay 29s must be at least the tick interval 30s"},
		{"unknown accumulation", func(s *window.Spec) { s.Accumulation = "accumulating" },
			`accumulation "accumulating" must be ACCUMULATING or DISCARDING`},
		{"every problem at once", func(s *window.Spec) { *s = window.Spec{} }, "name|key field|window size|idle timeout|accumulation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			tt.change(&s)
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error mentioning %q", tt.want)
			}
			msg := err.Error()
			for _, w := range strings.Split(tt.want, "|") {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("Validate() = %q, want it to mention %q (in order)", err, w)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}
