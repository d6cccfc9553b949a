package window_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

func ts(s string) time.Time {
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
