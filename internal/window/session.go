package window

import (
	"fmt"
	"slices"
	"time"
)

// Session windows (docs/event-time.md, "Session windows"): an order with
// event time t has the proto-window [t, t+G) for its key, and windows of one
// key that overlap merge into their span. The caller keeps a key's open
// sessions together (sorted by start, pairwise disjoint) and hands them to
// AcceptSession per order and OnTickSession per session at a tick; both are
// pure, like the rest of the package.
//
// A session's pane identity is (aggregation, Start, key). When a merge or an
// earlier order moves the start, the session continues under the new start
// (a fresh PaneState: pane_index from 0) and every identity that stopped
// existing is kept in Retired until the next tick gives it its MERGED pane.
// An identity that never emitted a pane never existed in the panes table, so
// it is dropped without one.

// Session is one open session of a key.
type Session struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// State is the pane bookkeeping of the identity (Start, key). Once the
	// session has fired ON_TIME (State.OnTime not pending) it never goes
	// back to EARLY.
	State PaneState `json:"st"`
	// Sum is every order of the session, including those of the sessions
	// merged into it, with the pending mark relative to State.
	Sum     Partial   `json:"sum"`
	Retired []Retired `json:"retired,omitempty"`
}

// Retired is a pane identity that stopped existing and owes its MERGED pane.
type Retired struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"` // its session's end when it stopped existing
	State PaneState `json:"st"`
}

// Window is the session's current extent.
func (ss Session) Window() Window { return Window{Start: ss.Start, End: ss.End} }

// Overlaps reports whether two windows overlap (merge, for sessions).
func (w Window) Overlaps(o Window) bool { return w.Start.Before(o.End) && o.Start.Before(w.End) }

// AcceptSession adds order o to the open sessions ss of its key (sorted by
// start, pairwise disjoint, none expired) and returns them again sorted. wm
// is the watermark o was classified against, now its acceptance time.
//
// The order is refused when its proto-window is too late (t + G + L <= W):
// judged per order before merging, whatever sessions it would touch. The
// sessions its proto-window overlaps merge with it into their span. The
// merged session has fired ON_TIME when a part had, or when the order joins
// a part whose end W has reached.
func (s Spec) AcceptSession(ss []Session, o Order, wm, now time.Time) ([]Session, error) {
	if !s.Session() {
		return ss, fmt.Errorf("accept order %s: %s has no session windows", o.ID, s.Name)
	}
	proto := s.proto(o.EventTime)
	if s.Classify(proto, wm) == TooLate {
		return ss, fmt.Errorf("accept order %s: proto-window [%s, %s) is too late at watermark %s",
			o.ID, proto.Start.Format(time.RFC3339Nano), proto.End.Format(time.RFC3339Nano), wm.Format(time.RFC3339))
	}
	merged := Session{Start: proto.Start, End: proto.End}
	var parts, rest []Session
	for _, x := range ss {
		if x.Window().Overlaps(proto) {
			parts = append(parts, x)
			merged.Start, merged.End = minTime(merged.Start, x.Start), maxTime(merged.End, x.End)
		} else {
			rest = append(rest, x)
		}
	}
	fired, done := false, false
	var sum Partial
	for _, x := range parts {
		fired = fired || x.State.onTime() != OnTimePending || reached(wm, x.End)
		done = done || x.State.onTime() == OnTimeDone
		c, err := Combine(x.State, []Partial{x.Sum})
		if err != nil {
			return ss, fmt.Errorf("accept order %s: %w", o.ID, err)
		}
		if sum.Measures, err = sum.Measures.Add(c.Total); err != nil {
			return ss, fmt.Errorf("accept order %s: merge session %s: %w", o.ID, x.Start.Format(time.RFC3339Nano), err)
		}
		sum.OnTime = sum.OnTime || c.OnTime
		sum.PendingSince = earliest(sum.PendingSince, c.FirstPending)
		sum.MaxEventTime, sum.LastAccepted = maxTime(sum.MaxEventTime, c.MaxEventTime), maxTime(sum.LastAccepted, c.LastAccepted)
		merged.Retired = append(merged.Retired, x.Retired...)
		switch {
		case x.Start.Equal(merged.Start):
			merged.State = x.State // the start did not move: the identity goes on
		case x.State.NextIndex > 0:
			merged.Retired = append(merged.Retired, Retired{Start: x.Start, End: x.End, State: x.State})
		}
	}
	if fired {
		switch {
		case done:
			merged.State.OnTime = OnTimeDone
		case merged.State.onTime() == OnTimePending:
			merged.State.OnTime = OnTimeNever
		}
	}
	// Whatever the parts held is a change of the identity that goes on
	// unless its own panes covered it: at the latest, it came with o.
	sum.Epoch = merged.State.NextIndex
	var err error
	if merged.Sum, err = sum.add(merged.State, o, !reached(wm, merged.End), now); err != nil {
		return ss, err
	}
	slices.SortFunc(merged.Retired, func(a, b Retired) int { return a.Start.Compare(b.Start) })
	out := append(rest, merged)
	slices.SortFunc(out, func(a, b Session) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// SessionOutcome is what OnTickSession decided for one session.
type SessionOutcome struct {
	Session Session
	// Panes: the MERGED panes of its retired identities, then at most one
	// pane of its own; recorded with Session in one transaction.
	Panes   []Pane
	Expired bool // W >= End + L: after recording Panes, the session is gone
}

// OnTickSession runs the trigger of one session of key at a tick, as OnTick
// does for a window, with the session's current extent: EARLY while it has
// not fired and W < End, its one ON_TIME pane, LATE panes after, expiry at
// W >= End + L. Every retired identity first gets its MERGED pane:
// measures zero in ACCUMULATING, minus what it emitted in DISCARDING, and
// MergedInto the session's start. Re-running it on the returned session at
// the same times yields no pane.
func (s Spec) OnTickSession(key string, ss Session, wm, now time.Time) (SessionOutcome, error) {
	var panes []Pane
	for _, r := range ss.Retired {
		var m Measures
		if s.Accumulation == Discarding {
			var err error
			if m, err = (Measures{}).Sub(r.State.Emitted); err != nil {
				return SessionOutcome{}, fmt.Errorf("pane %s: %w", PaneID(s.Name, r.Start, key, r.State.NextIndex), err)
			}
		}
		p := s.pane(key, Window{Start: r.Start, End: r.End}, r.State.NextIndex, TimingMerged, m, wm, now)
		p.MergedInto = ss.Start.UTC()
		panes = append(panes, p)
	}
	ss.Retired = nil
	c, err := Combine(ss.State, []Partial{ss.Sum})
	if err != nil {
		return SessionOutcome{}, err
	}
	out, err := s.OnTick(WindowKey{Window: ss.Window(), Key: key}, ss.State, c, wm, now)
	if err != nil {
		return SessionOutcome{}, err
	}
	if out.Pane != nil {
		panes = append(panes, *out.Pane)
		// Compact the sum against the new state: what the pane covered is
		// no longer pending.
		ss.Sum = Partial{Measures: c.Total, OnTime: c.OnTime, Epoch: out.State.NextIndex,
			MaxEventTime: c.MaxEventTime, LastAccepted: c.LastAccepted}
	}
	ss.State = out.State
	return SessionOutcome{Session: ss, Panes: panes, Expired: out.Expired}, nil
}

// NextDueSession is when a session's trigger next fires on processing time
// alone (its EARLY or LATE delay after its first un-emitted change), or at
// the latest on the watermark: zero when only the watermark can make it
// fire (its end or its expiry).
func (s Spec) NextDueSession(ss Session, wm, now time.Time) time.Time {
	if len(ss.Retired) > 0 {
		return now
	}
	c, err := Combine(ss.State, []Partial{ss.Sum})
	if err != nil || !changed(ss.State, c) {
		return time.Time{}
	}
	if c.FirstPending.IsZero() {
		return now
	}
	if !reached(wm, ss.End) && ss.State.onTime() == OnTimePending {
		return c.FirstPending.Add(s.EarlyDelay)
	}
	return c.FirstPending.Add(s.LateDelay)
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
