package windowtest

import (
	"cmp"
	"maps"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// agg is the reference state of one aggregation, its cells plain lists of
// the elements accepted in them. Dedup and invalid messages are per order,
// so Multi keeps them.
type agg struct {
	spec     window.Spec
	w        time.Time             // watermark; zero: none yet
	maxEvent time.Time             // M over this aggregation's accepted elements
	last     time.Time             // processing time of its last accepted element
	cells    map[cellID]*session   // fixed and sliding windows: sessions that never merge
	sessions map[string][]*session // session windows: the open sessions of each key
	closed   []*session            // sessions that expired (not those merged away)
	stats    Coverage              // sessions only
	panes    []window.Pane
	drops    []Drop
	fates    map[OrderWindow]Fate
}

type cellID struct {
	start int64 // Unix seconds
	key   string
}

// Element is what one order adds to one key of an aggregation.
type Element struct {
	Key      string
	Measures window.Measures
}

func newAgg(spec window.Spec) *agg {
	return &agg{spec: spec, cells: map[cellID]*session{}, sessions: map[string][]*session{},
		stats: Coverage{}, fates: map[OrderWindow]Fate{}}
}

// deliver handles the first delivery of order id with event time t whose
// elements in this aggregation are elems (none: the order is not in it),
// each window of t on its own.
func (a *agg) deliver(id string, t time.Time, elems []Element, now time.Time) {
	if len(elems) == 0 {
		return
	}
	counted := false
	for _, win := range a.windowsOf(t) {
		start, end := win[0], win[1]
		ow := OrderWindow{PedidoID: id, WindowStart: start}
		if !a.w.IsZero() && !a.w.Before(end.Add(a.spec.AllowedLateness)) {
			a.fates[ow] = Dropped
			a.drops = append(a.drops, Drop{PedidoID: id, WindowStart: start, Watermark: a.w, ReceivedAt: now})
			continue
		}
		a.fates[ow] = Accepted
		counted = true
		late := !a.w.IsZero() && !a.w.Before(end)
		for _, el := range elems {
			if a.spec.Session() {
				a.join(el, id, start, end, now)
				continue
			}
			id := cellID{start.Unix(), el.Key}
			c := a.cells[id]
			if c == nil {
				c = &session{start: start, end: end, key: el.Key}
				a.cells[id] = c
			}
			c.orders = append(c.orders,
				&accepted{id: ow.PedidoID, m: el.Measures, changeAt: now, onTime: !late})
		}
	}
	if counted {
		if t.After(a.maxEvent) {
			a.maxEvent = t
		}
		if now.After(a.last) {
			a.last = now
		}
	}
}

func (a *agg) tick(now time.Time) {
	if !a.last.IsZero() { // no order yet: W stays at minus infinity (Beam)
		meff := now
		if now.Sub(a.last) < a.spec.IdleTimeout && a.maxEvent.Before(now) {
			meff = a.maxEvent
		}
		if c := meff.Add(-a.spec.OutOfOrderness); a.w.IsZero() || c.After(a.w) {
			a.w = c
		}
	}
	if a.spec.Session() {
		a.tickSessions(now)
		return
	}
	for _, c := range a.sortedCells() {
		if !c.expired {
			c.expired = a.fire(c, now)
		}
	}
}

func (a *agg) record(key string, start, end time.Time, idx int64, t window.Timing, m window.Measures, now time.Time) *window.Pane {
	a.panes = append(a.panes, window.Pane{Aggregation: a.spec.Name, Key: key, WindowStart: start, WindowEnd: end,
		Index: idx, Timing: t, Accumulation: a.spec.Accumulation, Measures: m, Watermark: a.w, EmittedAt: now.UTC()})
	return &a.panes[len(a.panes)-1]
}

// windowsOf lists the [start, end) windows holding t, oldest first, with
// big integers over nanoseconds, deliberately unlike package window's
// arithmetic (Euclidean division floors for a positive divisor).
func (a *agg) windowsOf(t time.Time) [][2]time.Time {
	if a.spec.Session() { // the proto-window
		return [][2]time.Time{{t.UTC(), t.UTC().Add(a.spec.Gap)}}
	}
	period := a.spec.Period
	if period == 0 {
		period = a.spec.WindowSize
	}
	ns := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
	ns.Add(ns, big.NewInt(int64(t.Nanosecond())))
	p := big.NewInt(int64(period))
	newest := new(big.Int).Div(ns, p)
	newest.Mul(newest, p)
	n := int64(a.spec.WindowSize / period)
	out := make([][2]time.Time, 0, n)
	for k := n - 1; k >= 0; k-- {
		start := new(big.Int).Sub(newest, new(big.Int).Mul(big.NewInt(k), p))
		sec, nsec := new(big.Int).DivMod(start, big.NewInt(1e9), new(big.Int))
		s := time.Unix(sec.Int64(), nsec.Int64()).UTC()
		out = append(out, [2]time.Time{s, s.Add(a.spec.WindowSize)})
	}
	return out
}

// sum adds up elements with big integers; Pedidos counts distinct orders,
// straight from its definition.
func sum(orders []*accepted) window.Measures {
	var imp, uni big.Int
	ids := map[string]bool{}
	for _, x := range orders {
		imp.Add(&imp, x.m.Importe.BigNanos())
		uni.Add(&uni, big.NewInt(x.m.Unidades))
		ids[x.id] = true
	}
	return measures(&imp, &uni, int64(len(ids)))
}

func (a *agg) sortedCells() []*session {
	return slices.SortedFunc(maps.Values(a.cells), func(x, y *session) int {
		return cmp.Or(x.start.Compare(y.start), cmp.Compare(x.key, y.key))
	})
}

// all are the cells, or the sessions the view must show: open and expired
// ones, not those merged into another.
func (a *agg) all() []*session {
	out := append(slices.Collect(maps.Values(a.cells)), a.closed...)
	for _, ss := range a.sessions {
		out = append(out, ss...)
	}
	return out
}

func (a *agg) final() map[window.WindowKey]window.Measures {
	out := map[window.WindowKey]window.Measures{}
	for _, s := range a.all() {
		out[window.WindowKey{Window: window.Window{Start: s.start, End: s.end}, Key: s.key}] = s.sum(func(*accepted) bool { return true })
	}
	return out
}

func (a *agg) settled() bool {
	return !slices.ContainsFunc(a.all(), func(s *session) bool {
		_, pending := s.firstChange()
		return pending || len(s.retired) > 0
	})
}
