package window

import "time"

// Window is the event-time interval [Start, End).
type Window struct {
	Start time.Time
	End   time.Time
}

// WindowOf returns the fixed window holding event time t: windows are aligned
// to the Unix epoch in UTC, so for t before 1970 the start is floored, not
// truncated toward zero. The result is in UTC without a monotonic reading, so
// equal windows compare equal with == and can key a map.
func (s Spec) WindowOf(t time.Time) Window {
	size := int64(s.WindowSize / time.Second)
	if size <= 0 {
		size = 1 // an invalid spec must not divide by zero; Validate reports it
	}
	// t.Unix() is already the floor in seconds (nanoseconds are always >= 0)
	// and whole-second sizes make the floor on seconds exact.
	sec := t.Unix()
	start := sec / size * size
	if start > sec {
		start -= size
	}
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

// Lateness is how an order stands against the watermark when it is handled.
type Lateness int

const (
	// OnTime: W < end. The order counts and waits for the EARLY/ON_TIME panes.
	OnTime Lateness = iota
	// Late: end <= W < end+L. The order counts and produces a LATE pane.
	Late
	// TooLate: end+L <= W. The order is dropped and recorded.
	TooLate
)

func (l Lateness) String() string {
	switch l {
	case OnTime:
		return "on_time"
	case Late:
		return "late"
	case TooLate:
		return "too_late"
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

// ExpiryOf is the watermark at which w expires (end + L): from then on its
// orders are too late and its state may be deleted.
func (s Spec) ExpiryOf(w Window) time.Time {
	return w.End.Add(s.AllowedLateness)
}

// reached reports wm >= t, treating the zero watermark as minus infinity.
func reached(wm, t time.Time) bool {
	return !wm.IsZero() && !wm.Before(t)
}
