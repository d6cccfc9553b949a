package window

import "time"

// Window is the event-time interval [Start, End).
type Window struct {
	Start time.Time
	End   time.Time
}

// Session reports whether s has session windows (Gap > 0).
func (s Spec) Session() bool { return s.Gap > 0 }

// Size is the extent of the window an element is assigned: S, or G.
func (s Spec) Size() time.Duration {
	if s.Session() {
		return s.Gap
	}
	return s.WindowSize
}

// Sliding reports whether s has sliding windows (0 < Period < WindowSize).
func (s Spec) Sliding() bool {
	return s.Period > 0 && s.Period < s.WindowSize
}

// PeriodOrSize is the distance between consecutive window starts.
func (s Spec) PeriodOrSize() time.Duration {
	if s.Period > 0 {
		return s.Period
	}
	return s.WindowSize
}

// WindowOf returns the newest window holding event time t, the one that
// expires last, so its ExpiryOf bounds how long an order's dedup record is
// needed; with session windows, the proto-window [t, t+G). Windows are
// aligned to the Unix epoch (floored before 1970) and in UTC without a
// monotonic reading, so equal windows are == and can key a map.
func (s Spec) WindowOf(t time.Time) Window {
	if s.Session() {
		return s.proto(t)
	}
	size, period := s.seconds()
	return window(floorTo(t.Unix(), period), size)
}

// WindowsOf returns every window holding event time t, ascending by start:
// those starting on a multiple of the period in (t - WindowSize, t].
func (s Spec) WindowsOf(t time.Time) []Window {
	if s.Session() {
		return []Window{s.proto(t)}
	}
	size, period := s.seconds()
	last := floorTo(t.Unix(), period)
	n := size / period
	ws := make([]Window, n)
	for i := range n {
		ws[i] = window(last-(n-1-i)*period, size)
	}
	return ws
}

// IsWindowOf reports whether w is one of WindowsOf(t).
func (s Spec) IsWindowOf(w Window, t time.Time) bool {
	if s.Session() {
		return w == s.proto(t)
	}
	size, period := s.seconds()
	return w.Contains(t) && w.Start.Nanosecond() == 0 &&
		w.End.Sub(w.Start) == time.Duration(size)*time.Second &&
		floorTo(w.Start.Unix(), period) == w.Start.Unix()
}

// proto is an order's proto-window: sessions are aligned to nothing.
func (s Spec) proto(t time.Time) Window {
	t = t.UTC().Round(0)
	return Window{Start: t, End: t.Add(s.Gap)}
}

// seconds returns the size and period in whole seconds, never zero and with
// the period dividing the size: an invalid spec must not divide by zero or
// loop (Validate reports it), so it degrades to fixed windows.
func (s Spec) seconds() (size, period int64) {
	size = int64(s.WindowSize / time.Second)
	if size <= 0 {
		size = 1
	}
	period = int64(s.Period / time.Second)
	if period <= 0 || period > size || size%period != 0 {
		period = size
	}
	return size, period
}

// floorTo floors sec to a multiple of step (> 0), toward minus infinity;
// whole-second steps make flooring t.Unix() exact.
func floorTo(sec, step int64) int64 {
	start := sec / step * step
	if start > sec {
		start -= step
	}
	return start
}

func window(start, size int64) Window {
	return Window{
		Start: time.Unix(start, 0).UTC(),
		End:   time.Unix(start+size, 0).UTC(),
	}
}

// Contains reports whether t falls in w.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Start) && t.Before(w.End)
}

// WindowKey names one aggregated cell: a window and a key value.
type WindowKey struct {
	Window Window
	Key    string
}

// Lateness is how an order's window stands against the watermark.
type Lateness int

const (
	OnTime  Lateness = iota // W < end
	Late                    // end <= W < end+L: counts, in a LATE pane
	TooLate                 // end+L <= W: dropped and recorded
)

func (l Lateness) String() string {
	if names := [...]string{"on_time", "late", "too_late"}; l >= 0 && int(l) < len(names) {
		return names[l]
	}
	return "unknown"
}

// Classify places window w against watermark wm. A zero wm means no
// watermark yet (Beam's TIMESTAMP_MIN_VALUE): everything is on time.
func (s Spec) Classify(w Window, wm time.Time) Lateness {
	switch {
	case !reached(wm, w.End):
		return OnTime
	case !reached(wm, s.ExpiryOf(w)):
		return Late
	}
	return TooLate
}

// ExpiryOf is the watermark at which w expires (end + L) and its state may go.
func (s Spec) ExpiryOf(w Window) time.Time {
	return w.End.Add(s.AllowedLateness)
}

// reached reports wm >= t, treating the zero watermark as minus infinity.
func reached(wm, t time.Time) bool {
	return !wm.IsZero() && !wm.Before(t)
}
