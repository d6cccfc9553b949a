package windowtest

import (
	"maps"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// The model of session windows keeps plain lists like the rest of the
// model: a session is its orders, each marked with whether the panes of the
// current identity cover it and since when it is a change for it, where
// package window keeps a running sum and a pending mark.

// SessionStats counts, by case, what the sessions of aggregation name went
// through, for property tests' coverage: "merge", an order joined at least
// one session; "bridge", two or more; "session start moved", a new
// identity; "change after ON_TIME", an order changed a fired session;
// "fired session extended past W"; "bridge past an expired session", an
// order's proto-window overlapped a session that had expired (bridging or not).
func (m *Multi) SessionStats(name string) Coverage { return maps.Clone(m.agg(name).stats) }

// session is a session of a key, or a cell (a window and key) that never
// merges.
type session struct {
	key        string
	start, end time.Time
	orders     []*accepted
	next       int64 // next pane index of the identity (start, key)
	fired      bool  // no EARLY pane and no ON_TIME pane any more
	onTimeDone bool  // some identity of this session emitted ON_TIME
	expired    bool  // cells only: expired sessions move to agg.closed
	retired    []retiredID
}

type accepted struct {
	id       string
	m        window.Measures
	changeAt time.Time // when it became a change of the current identity
	onTime   bool      // accepted while W < the session's end
	covered  bool      // in a pane of the current identity
}

// retiredID is an identity that stopped existing and owes its MERGED pane.
type retiredID struct {
	start, end time.Time
	next       int64
	emitted    window.Measures // what its panes carried in all
}

// join adds one element with proto-window [lo, hi) to its key's sessions.
func (a *agg) join(el Element, id string, lo, hi, now time.Time) {
	var parts, rest []*session
	start, end := lo, hi
	for _, s := range a.sessions[el.Key] {
		if s.start.Before(hi) && lo.Before(s.end) {
			parts = append(parts, s)
			if s.start.Before(start) {
				start = s.start
			}
			if s.end.After(end) {
				end = s.end
			}
		} else {
			rest = append(rest, s)
		}
	}
	for _, c := range a.closed {
		if c.key == el.Key && c.start.Before(hi) && lo.Before(c.end) {
			a.stats["bridge past an expired session"]++
			break
		}
	}
	ns := &session{key: el.Key, start: start, end: end}
	for _, p := range parts {
		// Joining a part whose end W has reached: the session has fired.
		ns.fired = ns.fired || p.fired || (!a.w.IsZero() && !a.w.Before(p.end))
		ns.onTimeDone = ns.onTimeDone || p.onTimeDone
		ns.retired = append(ns.retired, p.retired...)
		if p.start.Equal(start) {
			ns.next = p.next
			ns.orders = append(ns.orders, p.orders...)
			continue
		}
		if p.next > 0 {
			ns.retired = append(ns.retired, retiredID{start: p.start, end: p.end, next: p.next, emitted: p.emitted()})
		}
		// Its orders are changes of the identity that goes on. (Only an
		// identity that emitted, next > 0, has covered orders.)
		for _, o := range p.orders {
			if o.covered {
				o.covered, o.changeAt = false, now
			}
			ns.orders = append(ns.orders, o)
		}
	}
	if len(parts) > 0 {
		a.stats["merge"]++
		if len(parts) > 1 {
			a.stats["bridge"]++
		}
		if !parts[0].start.Equal(start) && parts[0].next > 0 {
			a.stats["session start moved"]++
		}
		if ns.fired {
			a.stats["change after ON_TIME"]++
			if a.w.Before(end) {
				a.stats["fired session extended past W"]++
			}
		}
	}
	onTime := a.w.IsZero() || a.w.Before(end)
	ns.orders = append(ns.orders, &accepted{id: id, m: el.Measures, changeAt: now, onTime: onTime})
	slices.SortFunc(ns.retired, func(x, y retiredID) int { return x.start.Compare(y.start) })
	out := append(rest, ns)
	slices.SortFunc(out, func(x, y *session) int { return x.start.Compare(y.start) })
	a.sessions[el.Key] = out
}

// emitted is what the identity's panes carried in all.
func (s *session) emitted() window.Measures {
	return s.sum(func(o *accepted) bool { return o.covered })
}

func (s *session) sum(keep func(*accepted) bool) window.Measures {
	return sum(slices.DeleteFunc(slices.Clone(s.orders), func(o *accepted) bool { return !keep(o) }))
}

func (a *agg) tickSessions(now time.Time) {
	for _, key := range slices.Sorted(maps.Keys(a.sessions)) {
		var open []*session
		for _, s := range a.sessions[key] {
			for _, r := range s.retired {
				var m window.Measures
				if a.spec.Accumulation == window.Discarding {
					m = negate(r.emitted)
				}
				a.record(key, r.start, r.end, r.next, window.TimingMerged, m, now).MergedInto = s.start
			}
			s.retired = nil
			if a.fire(s, now) {
				a.closed = append(a.closed, s)
				continue
			}
			open = append(open, s)
		}
		if len(open) == 0 {
			delete(a.sessions, key)
			continue
		}
		a.sessions[key] = open
	}
}

// fire runs the trigger of a session or cell at a tick and reports whether
// it expires.
func (a *agg) fire(s *session, now time.Time) (expiring bool) {
	first, pending := s.firstChange()
	atEnd := !a.w.IsZero() && !a.w.Before(s.end)
	expiring = !a.w.IsZero() && !a.w.Before(s.end.Add(a.spec.AllowedLateness))
	switch {
	case !s.fired && !atEnd:
		if pending && now.Sub(first) >= a.spec.EarlyDelay {
			a.emitSession(s, window.TimingEarly, now)
		}
	case !s.fired && slices.ContainsFunc(s.orders, func(o *accepted) bool { return o.onTime }):
		s.fired, s.onTimeDone = true, true
		a.emitSession(s, window.TimingOnTime, now)
	default:
		s.fired = true
		if pending && (expiring || now.Sub(first) >= a.spec.LateDelay) {
			a.emitSession(s, window.TimingLate, now)
		}
	}
	return expiring
}

// firstChange is when the earliest change not in a pane of the current
// identity arrived; pending is false when there is none.
func (s *session) firstChange() (time.Time, bool) {
	var first time.Time
	pending := false
	for _, o := range s.orders {
		if !o.covered && (!pending || o.changeAt.Before(first)) {
			first, pending = o.changeAt, true
		}
	}
	return first, pending
}

func (a *agg) emitSession(s *session, t window.Timing, now time.Time) {
	m := s.sum(func(o *accepted) bool { return a.spec.Accumulation == window.Accumulating || !o.covered })
	for _, o := range s.orders {
		o.covered = true
	}
	a.record(s.key, s.start, s.end, s.next, t, m, now)
	s.next++
}

func negate(m window.Measures) window.Measures {
	return measures(new(big.Int).Neg(m.Importe.BigNanos()), big.NewInt(-m.Unidades), -m.Pedidos)
}
