package windowtest

import (
	"cmp"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// agg is the reference state of one aggregation: its watermark, its cells
// (each a plain list of the elements accepted in it), its panes, its
// too-late (order, window) drops and the fate of every (order, window).
// Model and Multi hold one per aggregation; dedup and invalid messages are
// theirs, since they are per order, not per aggregation.
type agg struct {
	spec     window.Spec
	w        time.Time // watermark; zero: none yet
	maxEvent time.Time // M over this aggregation's accepted elements
	last     time.Time // processing time of its last accepted element
	cells    map[cellID]*cell
	sessions map[string][]*session // session windows: the open sessions of each key
	closed   []*session            // sessions that expired (not those merged away)
	stats    SessionStats
	panes    []window.Pane
	drops    []Drop
	fates    map[OrderWindow]Fate
}

type cellID struct {
	start int64 // Unix seconds
	key   string
}

type cell struct {
	start, end time.Time
	key        string
	orders     []accepted // in acceptance order; at most one per order
	emitted    int        // orders covered by the panes so far
	next       int64      // next pane index
	onTimeDone bool
	expired    bool
}

type accepted struct {
	id     string
	m      window.Measures
	at     time.Time // processing time of acceptance
	onTime bool      // accepted while W < end
}

// element is what one order adds to one key of an aggregation.
type element struct {
	key string
	m   window.Measures
}

func newAgg(spec window.Spec) *agg {
	return &agg{spec: spec, cells: map[cellID]*cell{}, sessions: map[string][]*session{}, fates: map[OrderWindow]Fate{}}
}

// deliver handles the first delivery of order id with event time t whose
// elements in this aggregation are elems (none: the order is not in it).
// Each window of t on its own: too late (end + L <= W) drops the (order,
// window); otherwise every element counts in its cell, for the ticks, or
// joins its key's sessions (judged on its proto-window before any merge).
func (a *agg) deliver(id string, t time.Time, elems []element, now time.Time) {
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
			id := cellID{start.Unix(), el.key}
			c := a.cells[id]
			if c == nil {
				c = &cell{start: start, end: end, key: el.key}
				a.cells[id] = c
			}
			c.orders = append(c.orders, accepted{id: ow.PedidoID, m: el.m, at: now, onTime: !late})
		}
	}
	if counted {
		a.observe(t, now)
	}
}

// observe feeds the watermark an element accepted at now with event time t.
func (a *agg) observe(t, now time.Time) {
	if t.After(a.maxEvent) {
		a.maxEvent = t
	}
	if now.After(a.last) {
		a.last = now
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
		if c.expired {
			continue
		}
		pending := c.orders[c.emitted:]
		if a.w.IsZero() || a.w.Before(c.end) {
			if len(pending) > 0 && now.Sub(pending[0].at) >= a.spec.EarlyDelay {
				a.emit(c, window.TimingEarly, now)
			}
			continue
		}
		expiring := !a.w.Before(c.end.Add(a.spec.AllowedLateness))
		switch {
		case !c.onTimeDone && slices.ContainsFunc(c.orders, func(x accepted) bool { return x.onTime }):
			a.emit(c, window.TimingOnTime, now)
			c.onTimeDone = true
		case len(pending) > 0 && (expiring || now.Sub(pending[0].at) >= a.spec.LateDelay):
			a.emit(c, window.TimingLate, now)
		}
		c.expired = expiring
	}
}

func (a *agg) emit(c *cell, t window.Timing, now time.Time) {
	covered := c.orders
	if a.spec.Accumulation == window.Discarding {
		covered = c.orders[c.emitted:]
	}
	a.record(c.key, c.start, c.end, c.next, t, sum(covered), now)
	c.next++
	c.emitted = len(c.orders)
}

// record emits the pane of index idx of identity (start, key) at W, now.
func (a *agg) record(key string, start, end time.Time, idx int64, t window.Timing, m window.Measures,
	now time.Time) *window.Pane {
	a.panes = append(a.panes, window.Pane{Aggregation: a.spec.Name, Key: key, WindowStart: start, WindowEnd: end,
		Index: idx, Timing: t, Accumulation: a.spec.Accumulation, Measures: m, Watermark: a.w, EmittedAt: now.UTC()})
	return &a.panes[len(a.panes)-1]
}

// windowsOf lists the [start, end) windows holding t, oldest first. It
// works with big integers over nanoseconds, deliberately unlike package
// window's arithmetic: the newest window starts at t floored to the period
// (Euclidean division floors for a positive divisor), and the others one
// period apart before it, size/period in all.
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

// sum adds up elements with big integers. Pedidos is the number of
// distinct orders among them, straight from its definition (each element
// of one order in a cell is one order, whatever its lines).
func sum(orders []accepted) window.Measures {
	var imp, uni big.Int
	ids := map[string]bool{}
	for _, x := range orders {
		imp.Add(&imp, x.m.Importe.BigNanos())
		uni.Add(&uni, big.NewInt(x.m.Unidades))
		ids[x.id] = true
	}
	d, err := numeric.FromBigNanos(&imp)
	if err != nil || !uni.IsInt64() {
		panic("windowtest: model sums overflow; generate smaller orders")
	}
	return window.Measures{Importe: d, Pedidos: int64(len(ids)), Unidades: uni.Int64()}
}

func (a *agg) sortedCells() []*cell {
	cs := make([]*cell, 0, len(a.cells))
	for _, c := range a.cells {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(x, y *cell) int {
		return cmp.Or(x.start.Compare(y.start), cmp.Compare(x.key, y.key))
	})
	return cs
}

func (a *agg) final() map[window.WindowKey]window.Measures {
	if a.spec.Session() {
		return a.finalSessions()
	}
	out := make(map[window.WindowKey]window.Measures, len(a.cells))
	for _, c := range a.cells {
		out[window.WindowKey{Window: window.Window{Start: c.start, End: c.end}, Key: c.key}] = sum(c.orders)
	}
	return out
}

func (a *agg) settled() bool {
	if a.spec.Session() {
		return a.settledSessions()
	}
	for _, c := range a.cells {
		if c.emitted != len(c.orders) {
			return false
		}
	}
	return true
}
