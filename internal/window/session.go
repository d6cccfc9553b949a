package window

import (
	"fmt"
	"slices"
	"time"
)

// Session windows (docs/event-time.md, "Session windows"). A session's pane
// identity is (aggregation, Start, key). When a merge or an earlier order
// moves the start, the session goes on under the new start from pane_index 0,
// and every identity that stopped existing waits in Retired for the next
// tick's MERGED pane; one that never emitted a pane never existed in the
// panes table, so it is dropped without one.

// Session is one open session of a key.
type Session struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// State is the pane bookkeeping of the identity (Start, key). Once the
	// session has fired ON_TIME (State.OnTime not pending) it never goes
	// back to EARLY.
	State PaneState `json:"st"`
	// Sum is every order of the session, merged ones included, with the
	// pending mark relative to State.
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

// AcceptSession adds order o to the open sessions ss of its key (sorted by
// start, pairwise disjoint, none expired) and returns them again sorted. wm
// is the watermark o was classified against, now its acceptance time.
//
// A too-late proto-window (t + G + L <= W) is refused before any merge,
// whatever sessions it would touch. The merged session has fired ON_TIME
// when a part had, or when the order joins a part whose end W has reached.
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
		if x.Start.Before(proto.End) && proto.Start.Before(x.End) { // overlapping sessions merge
			parts = append(parts, x)
			merged.Start, merged.End = earlier(merged.Start, x.Start), later(merged.End, x.End)
		} else {
			rest = append(rest, x)
		}
	}
	fired, done := false, false
	var sum Partial
	for _, x := range parts {
		fired = fired || x.State.onTime() != OnTimePending || reached(wm, x.End)
		done = done || x.State.onTime() == OnTimeDone
		part := x.Sum
		part.Epoch = 0 // one epoch for every part: drop a mark its own panes covered
		if x.Sum.Epoch < x.State.NextIndex {
			part.PendingSince = time.Time{}
		}
		// Part by part, so that an overflow names the session that caused it
		// (the reason pedidos_descartados records).
		if _, err := sum.Measures.Add(part.Measures); err != nil {
			return ss, fmt.Errorf("accept order %s: merge session %s: %w",
				o.ID, x.Start.Format(time.RFC3339Nano), err)
		}
		sum, _ = Combine(PaneState{}, []Partial{sum, part}) // the same addition: it cannot fail
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

// OnTickSession runs OnTick on one session's current extent, after a
// MERGED pane for each retired identity: zero when accumulating, minus what
// it emitted when discarding. Re-running it on the returned session at the
// same times yields no pane.
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
		ss.Sum = c
		ss.Sum.Epoch, ss.Sum.PendingSince = out.State.NextIndex, time.Time{}
	}
	ss.State = out.State
	return SessionOutcome{Session: ss, Panes: panes, Expired: out.Expired}, nil
}

// NextDueSession is NextDue for a session, due at once while it owes
// MERGED panes.
func (s Spec) NextDueSession(ss Session, wm, now time.Time) time.Time {
	if len(ss.Retired) > 0 {
		return now
	}
	return s.NextDue(ss.Window(), ss.State, ss.Sum, wm, now)
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// later is the later of a and b in UTC: stored times carry no zone.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		a = b
	}
	return a.UTC()
}
