package window

import (
	"fmt"
	"time"
)

// Outcome is what OnTick decided for one (window, key).
type Outcome struct {
	State PaneState // equal to the state passed in when nothing changed: skip the write
	// Pane, when not nil, must be recorded in the same transaction as State
	// (the pane outbox); its ID makes rewriting it harmless.
	Pane *Pane
	// Expired: W >= end + L. After recording Pane, the cell's state may be
	// deleted; its dedup records once no redelivery needs them.
	Expired bool
}

// OnTick runs the trigger of one (window, key) at a tick to watermark wm at
// processing time now, on the state and content read in the transaction.
//
//   - W < end: an EARLY pane when something changed since the previous pane
//     and the first un-emitted change is at least E old.
//   - W >= end, ON_TIME owed (orders were accepted while W < end): the ON_TIME
//     pane, whether or not anything changed (Beam's FIRE_ALWAYS).
//   - W >= end otherwise: a LATE pane when something changed and the first
//     un-emitted change is at least Ld old, or the window expires now.
//   - W >= end + L: Expired, after the pane above (at most one per call).
//
// Running it again with the returned state, the same content and the same
// times yields no pane: re-running a tick is harmless.
func (s Spec) OnTick(wk WindowKey, st PaneState, c Partial, wm, now time.Time) (Outcome, error) {
	if !reached(wm, wk.Window.End) && st.onTime() == OnTimePending {
		if changed(st, c) && due(c.PendingSince, s.EarlyDelay, now) {
			return s.emit(wk, st, c, TimingEarly, wm, now, false)
		}
		return Outcome{State: st}, nil
	}
	expired := reached(wm, s.ExpiryOf(wk.Window))
	if st.onTime() == OnTimePending {
		// Early panes only ever cover orders accepted while W < end.
		if c.OnTime || st.NextIndex > 0 {
			return s.emit(wk, st, c, TimingOnTime, wm, now, expired)
		}
		st.OnTime = OnTimeNever
	}
	if changed(st, c) && (expired || due(c.PendingSince, s.LateDelay, now)) {
		return s.emit(wk, st, c, TimingLate, wm, now, expired)
	}
	return Outcome{State: st, Expired: expired}, nil
}

func (s Spec) emit(wk WindowKey, st PaneState, c Partial, t Timing, wm, now time.Time, expired bool) (Outcome, error) {
	m := c.Measures
	if s.Accumulation == Discarding {
		var err error
		if m, err = c.Measures.Sub(st.Emitted); err != nil {
			return Outcome{}, fmt.Errorf("pane %s: %w", PaneID(s.Name, wk.Window.Start, wk.Key, st.NextIndex), err)
		}
	}
	p := s.pane(wk.Key, wk.Window, st.NextIndex, t, m, wm, now)
	st.OnTime = st.onTime()
	if t == TimingOnTime {
		st.OnTime = OnTimeDone
	}
	st.NextIndex++
	st.Emitted = c.Measures
	return Outcome{State: st, Pane: &p, Expired: expired}, nil
}

func (s Spec) pane(key string, w Window, idx int64, t Timing, m Measures, wm, now time.Time) Pane {
	return Pane{Aggregation: s.Name, Key: key, WindowStart: w.Start.UTC(), WindowEnd: w.End.UTC(), Index: idx,
		Timing: t, Accumulation: s.Accumulation, Measures: m, Watermark: wm.UTC(), EmittedAt: now.UTC()}
}

// NextDue is when the trigger of window w with state st and combined sum
// sum next fires on processing time alone: the EARLY (before the end) or
// LATE delay after its first change not yet in a pane; zero when only the
// watermark can make it fire.
func (s Spec) NextDue(w Window, st PaneState, sum Partial, wm, now time.Time) time.Time {
	c, err := Combine(st, []Partial{sum})
	if err != nil || !changed(st, c) {
		return time.Time{}
	}
	if c.PendingSince.IsZero() {
		return now // an unknown time counts as due, as in the trigger
	}
	if !reached(wm, w.End) && st.onTime() == OnTimePending {
		return c.PendingSince.Add(s.EarlyDelay)
	}
	return c.PendingSince.Add(s.LateDelay)
}

// changed reports a change since the previous pane. The totals alone would
// do (every order adds to Pedidos); PendingSince counts so that no pending
// mark is left behind.
func changed(st PaneState, c Partial) bool {
	return c.Measures != st.Emitted || !c.PendingSince.IsZero()
}

// due reports whether a change first seen at first is at least delay old;
// an unknown time counts as due rather than holding the change forever.
func due(first time.Time, delay time.Duration, now time.Time) bool {
	return first.IsZero() || now.Sub(first) >= delay
}
