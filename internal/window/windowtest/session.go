package windowtest

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// The model of session windows (docs/event-time.md, "Session windows"),
// kept as plain lists like the rest of the model: a session is its orders,
// each marked with whether the panes of the session's current identity
// cover it and since when it is a change for that identity; merging moves
// orders from one list to another. Package window keeps a running sum and
// a pending mark per session instead.

// SessionStats counts what the model's session windows went through, so
// that property tests can require their generators to produce each case.
type SessionStats struct {
	Merges        int // an order joined at least one session
	Bridges       int // an order joined two sessions or more into one
	StartMoved    int // an order moved a session's start (a new identity)
	AfterFired    int // an order changed a session that had fired ON_TIME
	PastExpired   int // an order's proto-window overlapped a session that had expired
	FiredExtended int // an order moved the end of a fired session past W
}

// SessionStats returns the session counts of aggregation name.
func (m *Multi) SessionStats(name string) SessionStats { return m.agg(name).stats }

// session is one session of a key.
type session struct {
	key        string
	start, end time.Time
	orders     []*sessOrder
	next       int64 // next pane index of the identity (start, key)
	fired      bool  // no EARLY pane and no ON_TIME pane any more
	onTimeDone bool  // some identity of this session emitted ON_TIME
	retired    []retiredID
}

type sessOrder struct {
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

// deliverSession handles an order's first delivery under session windows:
// too late iff t + G + L <= W, judged on the proto-window [t, t+G) before
// any merge; otherwise each element joins its key's sessions.
func (a *agg) deliverSession(id string, t time.Time, elems []element, now time.Time) {
	t = t.UTC()
	end := t.Add(a.spec.Gap)
	ow := OrderWindow{PedidoID: id, WindowStart: t}
	if !a.w.IsZero() && !a.w.Before(end.Add(a.spec.AllowedLateness)) {
		a.fates[ow] = Dropped
		a.drops = append(a.drops, Drop{PedidoID: id, WindowStart: t, Watermark: a.w, ReceivedAt: now})
		return
	}
	a.fates[ow] = Accepted
	for _, el := range elems {
		a.join(el, id, t, end, now)
	}
	if t.After(a.maxEvent) {
		a.maxEvent = t
	}
	if now.After(a.last) {
		a.last = now
	}
}

// join adds one element with proto-window [lo, hi) to its key's sessions.
func (a *agg) join(el element, id string, lo, hi, now time.Time) {
	var parts, rest []*session
	start, end := lo, hi
	for _, s := range a.sessions[el.key] {
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
		if c.key == el.key && c.start.Before(hi) && lo.Before(c.end) {
			a.stats.PastExpired++
			break
		}
	}
	ns := &session{key: el.key, start: start, end: end}
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
		for _, o := range p.orders {
			if o.covered {
				o.covered, o.changeAt = false, now
			}
			ns.orders = append(ns.orders, o)
		}
	}
	if ns.next == 0 { // a new identity: nothing of it was emitted
		for _, o := range ns.orders {
			if o.covered {
				o.covered, o.changeAt = false, now
			}
		}
	}
	if len(parts) > 0 {
		a.stats.Merges++
		if len(parts) > 1 {
			a.stats.Bridges++
		}
		if !parts[0].start.Equal(start) && parts[0].next > 0 {
			a.stats.StartMoved++
		}
		if ns.fired {
			a.stats.AfterFired++
			if a.w.Before(end) {
				a.stats.FiredExtended++
			}
		}
	}
	ns.orders = append(ns.orders, &sessOrder{id: id, m: el.m, changeAt: now, onTime: a.w.IsZero() || a.w.Before(end)})
	slices.SortFunc(ns.retired, func(x, y retiredID) int { return x.start.Compare(y.start) })
	out := append(rest, ns)
	slices.SortFunc(out, func(x, y *session) int { return x.start.Compare(y.start) })
	a.sessions[el.key] = out
}

// emitted is what the identity's panes carried in all: the orders they
// covered (ACCUMULATING: the last pane's totals, the same orders).
func (s *session) emitted() window.Measures {
	var covered []accepted
	for _, o := range s.orders {
		if o.covered {
			covered = append(covered, accepted{id: o.id, m: o.m})
		}
	}
	return sum(covered)
}

func (a *agg) tickSessions(now time.Time) {
	for _, key := range sortedKeys(a.sessions) {
		var open []*session
		for _, s := range a.sessions[key] {
			for _, r := range s.retired {
				var m window.Measures
				if a.spec.Accumulation == window.Discarding {
					m = negate(r.emitted)
				}
				a.panes = append(a.panes, window.Pane{Aggregation: a.spec.Name, Key: key,
					WindowStart: r.start, WindowEnd: r.end, Index: r.next, Timing: window.TimingMerged,
					Accumulation: a.spec.Accumulation, Measures: m, Watermark: a.w, EmittedAt: now.UTC(), MergedInto: s.start})
			}
			s.retired = nil
			first, pending := s.firstChange()
			atEnd := !a.w.IsZero() && !a.w.Before(s.end)
			expiring := !a.w.IsZero() && !a.w.Before(s.end.Add(a.spec.AllowedLateness))
			switch {
			case !s.fired && !atEnd:
				if pending && now.Sub(first) >= a.spec.EarlyDelay {
					a.emitSession(s, window.TimingEarly, now)
				}
			case !s.fired && slices.ContainsFunc(s.orders, func(o *sessOrder) bool { return o.onTime }):
				s.fired, s.onTimeDone = true, true
				a.emitSession(s, window.TimingOnTime, now)
			default:
				s.fired = true
				if pending && (expiring || now.Sub(first) >= a.spec.LateDelay) {
					a.emitSession(s, window.TimingLate, now)
				}
			}
			if expiring {
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
	var covered []accepted
	for _, o := range s.orders {
		if a.spec.Accumulation == window.Accumulating || !o.covered {
			covered = append(covered, accepted{id: o.id, m: o.m})
		}
		o.covered = true
	}
	a.panes = append(a.panes, window.Pane{Aggregation: a.spec.Name, Key: s.key,
		WindowStart: s.start, WindowEnd: s.end, Index: s.next, Timing: t,
		Accumulation: a.spec.Accumulation, Measures: sum(covered), Watermark: a.w, EmittedAt: now.UTC()})
	s.next++
}

func negate(m window.Measures) window.Measures {
	d, err := numeric.FromBigNanos(new(big.Int).Neg(m.Importe.BigNanos()))
	if err != nil {
		panic("windowtest: a negated measure overflows")
	}
	return window.Measures{Importe: d, Pedidos: -m.Pedidos, Unidades: -m.Unidades}
}

// allSessions are the sessions the view must show: open and expired ones,
// not those merged into another.
func (a *agg) allSessions() []*session {
	out := slices.Clone(a.closed)
	for _, ss := range a.sessions {
		out = append(out, ss...)
	}
	slices.SortFunc(out, func(x, y *session) int { return cmp.Or(cmp.Compare(x.key, y.key), x.start.Compare(y.start)) })
	return out
}

func (a *agg) finalSessions() map[window.WindowKey]window.Measures {
	out := map[window.WindowKey]window.Measures{}
	for _, s := range a.allSessions() {
		var all []accepted
		for _, o := range s.orders {
			all = append(all, accepted{id: o.id, m: o.m})
		}
		out[window.WindowKey{Window: window.Window{Start: s.start, End: s.end}, Key: s.key}] = sum(all)
	}
	return out
}

func (a *agg) settledSessions() bool {
	for _, s := range a.allSessions() {
		if _, pending := s.firstChange(); pending || len(s.retired) > 0 {
			return false
		}
	}
	return true
}

// checkSessionPanes is checkPanes for session windows: per identity
// (window_start, key), indexes contiguous from 0 and timings EARLY* ON_TIME?
// LATE* MERGED?; no EARLY pane at W >= its end, no ON_TIME pane before;
// a MERGED pane names an earlier start and is its identity's last; accumulating
// panes never shrink; for every key the view's sessions are the model's
// (invariant 7: they partition the key's accepted orders, and each shows
// the exact sum of its orders) once the model is settled.
func (a *agg) checkSessionPanes(panes []window.Pane) error {
	var p problems
	byID := map[string]window.Pane{}
	// Sessions start at event times, to the nanosecond.
	type ident struct {
		start time.Time
		key   string
	}
	idents := map[ident][]window.Pane{}
	for _, pn := range panes {
		if prev, ok := byID[pn.ID()]; ok {
			if !samePane(prev, pn) {
				p.addf("pane %s written twice with different content: %+v and %+v", pn.ID(), prev, pn)
			}
			continue
		}
		byID[pn.ID()] = pn
		id := ident{normalTime(pn.WindowStart), pn.Key}
		idents[id] = append(idents[id], pn)
	}
	for id, ps := range idents {
		slices.SortFunc(ps, func(a, b window.Pane) int { return cmp.Compare(a.Index, b.Index) })
		name := fmt.Sprintf("session %s key %q", id.start.Format(time.RFC3339Nano), id.key)
		stage := 0 // 0 early, 1 on time, 2 late, 3 merged
		for i, pn := range ps {
			if pn.Index != int64(i) {
				p.addf("%s: pane indexes %v are not contiguous from 0", name, indexes(ps))
				break
			}
			if pn.Aggregation != a.spec.Name || pn.Accumulation != a.spec.Accumulation {
				p.addf("pane %s: aggregation %q mode %s, want %q %s", pn.ID(), pn.Aggregation, pn.Accumulation, a.spec.Name, a.spec.Accumulation)
			}
			atEnd := !pn.Watermark.IsZero() && !pn.Watermark.Before(pn.WindowEnd)
			s := 0
			switch pn.Timing {
			case window.TimingEarly:
				if atEnd {
					p.addf("pane %s: EARLY at watermark %s >= end %s", pn.ID(), pn.Watermark, pn.WindowEnd)
				}
			case window.TimingOnTime:
				s = 1
				if !atEnd {
					p.addf("pane %s: ON_TIME at watermark %s < end %s", pn.ID(), pn.Watermark, pn.WindowEnd)
				}
			case window.TimingLate:
				s = 2
			case window.TimingMerged:
				s = 3
				if !pn.MergedInto.Before(pn.WindowStart) {
					p.addf("pane %s: MERGED into %s, not an earlier start", pn.ID(), pn.MergedInto)
				}
			default:
				p.addf("pane %s: unknown timing %q", pn.ID(), pn.Timing)
			}
			if pn.Timing != window.TimingMerged && !pn.MergedInto.IsZero() {
				p.addf("pane %s: %s with merged_into %s", pn.ID(), pn.Timing, pn.MergedInto)
			}
			if s < stage || (s == stage && s != 0 && s != 2) {
				p.addf("%s: timings %v are not EARLY* ON_TIME? LATE* MERGED?", name, timings(ps))
			}
			stage = max(stage, s)
			if i > 0 && s != 3 && a.spec.Accumulation == window.Accumulating && pn.Measures.Pedidos < ps[i-1].Measures.Pedidos {
				p.addf("pane %s: accumulating pane has %d pedidos, fewer than the previous %d", pn.ID(), pn.Measures.Pedidos, ps[i-1].Measures.Pedidos)
			}
		}
	}
	if a.settled() {
		view, err := View(slices.Collect(maps.Values(byID)))
		if err != nil {
			p.addf("%v", err)
		}
		want := a.final()
		for wk, m := range want {
			if got, ok := view[wk]; !ok || got != m {
				p.addf("session %s-%s key %q: the view shows %+v, want the sum of its accepted orders %+v",
					wk.Window.Start.Format(time.RFC3339), wk.Window.End.Format(time.RFC3339), wk.Key, got, m)
			}
		}
		for wk := range view {
			if _, ok := want[wk]; !ok {
				p.addf("session %s-%s key %q: in the view, but no such session",
					wk.Window.Start.Format(time.RFC3339), wk.Window.End.Format(time.RFC3339), wk.Key)
			}
		}
	}
	return p.err()
}
