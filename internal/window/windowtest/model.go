package windowtest

import (
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// Kind is what an Event does.
type Kind int

const (
	Deliver Kind = iota + 1 // one Pub/Sub message
	Tick                    // the timer, at processing time Now
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

// Fate is what became of a distinct order (Model) or (order, window) (Multi).
type Fate string

const (
	Accepted Fate = "accepted"
	Dropped  Fate = "dropped" // too late
)

// Drop is a too-late order (Model) or (order, window) (Multi), as the
// late-drops sink records it.
type Drop struct {
	PedidoID    string
	WindowStart time.Time
	Watermark   time.Time
	ReceivedAt  time.Time
}

// OrderWindow names an (order, window) of one aggregation: the unit that is
// accepted or dropped too late.
type OrderWindow struct {
	PedidoID    string
	WindowStart time.Time // UTC
}

// Model is the reference implementation of the specification for one
// aggregation with fixed windows, fed window.Orders. It is not safe for
// concurrent use.
type Model struct {
	multi *Multi // of the one aggregation
	a     *agg
}

// NewModel returns a model of spec, which must be valid and fixed (it panics
// otherwise).
func NewModel(spec window.Spec) *Model {
	if err := spec.Validate(); err != nil {
		panic(fmt.Sprintf("windowtest.NewModel: %v", err))
	}
	if spec.Period != 0 && spec.Period != spec.WindowSize {
		panic(fmt.Sprintf("windowtest.NewModel: %s has sliding windows (an order's fate is per window): use NewMulti", spec.Name))
	}
	a := newAgg(spec)
	return &Model{multi: &Multi{aggs: []*agg{a}, byName: map[string]*agg{spec.Name: a},
		seen: map[string]bool{}, invalid: map[string]bool{}}, a: a}
}

// Apply plays one event and returns the panes it emitted. It panics if
// events go back in processing time.
func (m *Model) Apply(e Event) []window.Pane {
	o := e.Order
	return m.multi.apply(e.Kind, e.Now, e.MessageID, e.Invalid, o.ID, func(a *agg) {
		a.deliver(o.ID, o.EventTime, []element{{key: o.Key, m: o.Measures}}, e.Now)
	})
}

// Watermark (zero: none yet), Panes (in emission order) and Drops (in the
// order dropped) are the model's after the events so far.
func (m *Model) Watermark() time.Time { return m.a.w }
func (m *Model) Panes() []window.Pane { return slices.Clone(m.a.panes) }
func (m *Model) Drops() []Drop        { return slices.Clone(m.a.drops) }

// Fates returns the fate of every distinct valid pedido_id delivered.
func (m *Model) Fates() map[string]Fate {
	out := make(map[string]Fate, len(m.a.fates))
	for ow, f := range m.a.fates {
		out[ow.PedidoID] = f // fixed windows: its one window
	}
	return out
}

// InvalidMessages returns the distinct message ids of invalid messages, sorted.
func (m *Model) InvalidMessages() []string { return m.multi.InvalidMessages() }

// Final returns the exact sum of the accepted orders of every (window, key),
// which the dashboard must show once the model is Settled: every accepted
// order emitted in a pane.
func (m *Model) Final() map[window.WindowKey]window.Measures { return m.a.final() }
func (m *Model) Settled() bool                               { return m.a.settled() }
