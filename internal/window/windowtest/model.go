package windowtest

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// Kind is what an Event does.
type Kind int

const (
	// Deliver hands one Pub/Sub message to the aggregation.
	Deliver Kind = iota + 1
	// Tick runs the timer at processing time Now.
	Tick
)

func (k Kind) String() string {
	switch k {
	case Deliver:
		return "deliver"
	case Tick:
		return "tick"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is one step of a stream. Events of a stream have non-decreasing Now.
type Event struct {
	Kind Kind
	Now  time.Time // processing time
	// MessageID is the Pub/Sub message id: a redelivery repeats it, a
	// republish of the same order gets a new one.
	MessageID string
	Order     window.Order
	// Invalid, when not empty, is why the message is not a valid order
	// ("invalid: ..."); render such a message broken in that way. Order.ID
	// is then only a label that no valid order uses.
	Invalid string
}

// Fate is what became of a distinct order.
type Fate string

const (
	Accepted Fate = "accepted"
	Dropped  Fate = "dropped" // too late
)

// Drop is a too-late order as the late-drops sink records it.
type Drop struct {
	PedidoID    string
	WindowStart time.Time
	Watermark   time.Time
	ReceivedAt  time.Time
}

// Model is the reference implementation of the specification. It is not
// safe for concurrent use.
type Model struct {
	spec     window.Spec
	w        time.Time // watermark; zero: none yet
	maxEvent time.Time
	last     time.Time
	now      time.Time // processing time of the latest event, to enforce order
	fates    map[string]Fate
	invalid  map[string]bool // message ids
	cells    map[cellID]*cell
	panes    []window.Pane
	drops    []Drop
}

type cellID struct {
	start int64 // Unix seconds
	key   string
}

type cell struct {
	start, end time.Time
	key        string
	orders     []accepted // in acceptance order
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

// NewModel returns a model of an aggregation with spec, which must be valid.
func NewModel(spec window.Spec) *Model {
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("windowtest.NewModel: %v", err))
	}
	return &Model{
		spec:    spec,
		fates:   map[string]Fate{},
		invalid: map[string]bool{},
		cells:   map[cellID]*cell{},
	}
}

// Apply plays one event and returns the panes it emitted.
// It panics if events go back in processing time.
func (m *Model) Apply(e Event) []window.Pane {
	if e.Now.Before(m.now) {
		panic(fmt.Sprintf("windowtest: event at %s after one at %s", e.Now, m.now))
	}
	m.now = e.Now
	before := len(m.panes)
	switch e.Kind {
	case Deliver:
		m.deliver(e)
	case Tick:
		m.tick(e.Now)
	default:
		panic(fmt.Sprintf("windowtest: unknown event kind %v", e.Kind))
	}
	return slices.Clone(m.panes[before:])
}

func (m *Model) deliver(e Event) {
	if e.Invalid != "" {
		m.invalid[e.MessageID] = true
		return
	}
	o := e.Order
	if _, seen := m.fates[o.ID]; seen {
		return // a duplicate is counted once: the first delivery decided
	}
	start, end := m.windowOf(o.EventTime)
	if !m.w.IsZero() && !m.w.Before(end.Add(m.spec.AllowedLateness)) {
		m.fates[o.ID] = Dropped
		m.drops = append(m.drops, Drop{PedidoID: o.ID, WindowStart: start, Watermark: m.w, ReceivedAt: e.Now})
		return
	}
	m.fates[o.ID] = Accepted
	id := cellID{start.Unix(), o.Key}
	c := m.cells[id]
	if c == nil {
		c = &cell{start: start, end: end, key: o.Key}
		m.cells[id] = c
	}
	late := !m.w.IsZero() && !m.w.Before(end)
	c.orders = append(c.orders, accepted{id: o.ID, m: o.Measures, at: e.Now, onTime: !late})
	if o.EventTime.After(m.maxEvent) {
		m.maxEvent = o.EventTime
	}
	if e.Now.After(m.last) {
		m.last = e.Now
	}
	if late && m.spec.LateDelay == 0 {
		// Ticks are atomic here, so a window holding on-time orders got its
		// ON_TIME pane at the tick that moved W past its end.
		m.emit(c, window.TimingLate, e.Now)
	}
}

func (m *Model) tick(now time.Time) {
	if !m.last.IsZero() { // no order yet: W stays at minus infinity (Beam)
		meff := now
		if now.Sub(m.last) < m.spec.IdleTimeout && m.maxEvent.Before(now) {
			meff = m.maxEvent
		}
		if c := meff.Add(-m.spec.OutOfOrderness); m.w.IsZero() || c.After(m.w) {
			m.w = c
		}
	}
	for _, c := range m.sortedCells() {
		if c.expired {
			continue
		}
		pending := c.orders[c.emitted:]
		if m.w.IsZero() || m.w.Before(c.end) {
			if len(pending) > 0 && now.Sub(pending[0].at) >= m.spec.EarlyDelay {
				m.emit(c, window.TimingEarly, now)
			}
			continue
		}
		expiring := !m.w.Before(c.end.Add(m.spec.AllowedLateness))
		switch {
		case !c.onTimeDone && slices.ContainsFunc(c.orders, func(a accepted) bool { return a.onTime }):
			m.emit(c, window.TimingOnTime, now)
			c.onTimeDone = true
		case len(pending) > 0 && (expiring || now.Sub(pending[0].at) >= m.spec.LateDelay):
			m.emit(c, window.TimingLate, now)
		}
		c.expired = expiring
	}
}

func (m *Model) emit(c *cell, t window.Timing, now time.Time) {
	covered := c.orders
	if m.spec.Accumulation == window.Discarding {
		covered = c.orders[c.emitted:]
	}
	m.panes = append(m.panes, window.Pane{
		Aggregation:  m.spec.Name,
		Key:          c.key,
		WindowStart:  c.start,
		WindowEnd:    c.end,
		Index:        c.next,
		Timing:       t,
		Accumulation: m.spec.Accumulation,
		Measures:     sum(covered),
		Watermark:    m.w,
		EmittedAt:    now.UTC(),
	})
	c.next++
	c.emitted = len(c.orders)
}

// windowOf computes the epoch-aligned window with big integers over
// nanoseconds, deliberately unlike package window's arithmetic.
func (m *Model) windowOf(t time.Time) (start, end time.Time) {
	ns := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
	ns.Add(ns, big.NewInt(int64(t.Nanosecond())))
	size := big.NewInt(int64(m.spec.WindowSize))
	q := new(big.Int).Div(ns, size) // Euclidean division: the floor for size > 0
	q.Mul(q, size)
	sec, nsec := new(big.Int).DivMod(q, big.NewInt(1e9), new(big.Int))
	start = time.Unix(sec.Int64(), nsec.Int64()).UTC()
	return start, start.Add(m.spec.WindowSize)
}

func sum(orders []accepted) window.Measures {
	var imp, ped, uni big.Int
	for _, a := range orders {
		imp.Add(&imp, a.m.Importe.BigNanos())
		ped.Add(&ped, big.NewInt(a.m.Pedidos))
		uni.Add(&uni, big.NewInt(a.m.Unidades))
	}
	d, err := numeric.FromBigNanos(&imp)
	if err != nil || !ped.IsInt64() || !uni.IsInt64() {
		panic("windowtest: model sums overflow; generate smaller orders")
	}
	return window.Measures{Importe: d, Pedidos: ped.Int64(), Unidades: uni.Int64()}
}

func (m *Model) sortedCells() []*cell {
	cs := make([]*cell, 0, len(m.cells))
	for _, c := range m.cells {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *cell) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.key, b.key))
	})
	return cs
}

// Watermark is W after the events so far (zero: none yet).
func (m *Model) Watermark() time.Time { return m.w }

// Panes returns every pane emitted so far, in emission order.
func (m *Model) Panes() []window.Pane { return slices.Clone(m.panes) }

// Drops returns the too-late orders, in the order they were dropped.
func (m *Model) Drops() []Drop { return slices.Clone(m.drops) }

// Fates returns the fate of every distinct valid pedido_id delivered.
func (m *Model) Fates() map[string]Fate {
	out := make(map[string]Fate, len(m.fates))
	for id, f := range m.fates {
		out[id] = f
	}
	return out
}

// InvalidMessages returns the distinct message ids of invalid messages, sorted.
func (m *Model) InvalidMessages() []string {
	out := make([]string, 0, len(m.invalid))
	for id := range m.invalid {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Final returns the exact sum of the accepted orders of every (window, key):
// what the dashboard must show once every change has been emitted.
func (m *Model) Final() map[window.WindowKey]window.Measures {
	out := make(map[window.WindowKey]window.Measures, len(m.cells))
	for _, c := range m.cells {
		out[c.windowKey()] = sum(c.orders)
	}
	return out
}

// Settled reports whether every accepted order has been emitted in a pane,
// so that the dashboard view must equal Final.
func (m *Model) Settled() bool {
	for _, c := range m.cells {
		if c.emitted != len(c.orders) {
			return false
		}
	}
	return true
}

func (c *cell) windowKey() window.WindowKey {
	return window.WindowKey{Window: window.Window{Start: c.start, End: c.end}, Key: c.key}
}
