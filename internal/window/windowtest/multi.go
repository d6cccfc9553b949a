package windowtest

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// Keys Multi knows how to take from an order (docs/event-time.md, "Windows
// and keys"): two order fields, and the SKU of each line.
const (
	KeyPais      = "pais"
	KeyClienteID = "cliente_id"
	KeySKU       = "sku"
)

// MultiEvent is one step of a stream: the delivery of a whole order, or a
// tick of the timer that serves every aggregation. Events of a stream have
// non-decreasing Now.
type MultiEvent struct {
	Kind Kind
	Now  time.Time // processing time
	// MessageID is the Pub/Sub message id: a redelivery repeats it, a
	// republish of the same order gets a new one.
	MessageID string
	// Order is the order as the message carries it (SKUs as written), valid
	// if order.Parse accepts it; with Invalid set, only a template.
	Order order.Order
	// Invalid, when not empty, is why the message is not a valid order
	// ("invalid: ..."); render such a message broken in that way.
	Invalid string
}

// SKUMissing is a line without a SKU as the dead-letter sink records it:
// per aggregation keyed by sku, on the order's first delivery, whatever its
// lateness.
type SKUMissing struct {
	Aggregation string
	PedidoID    string
	Line        int // index in lineas
	ReceivedAt  time.Time
}

// Multi is the reference implementation of the specification for several
// aggregations fed the same orders. It is not safe for concurrent use.
//
// Contract, for a system under test fed the same MultiEvents:
//
//   - Dedup is per order across every aggregation: the first valid delivery
//     of a pedido_id decides everything; later ones (redelivery or
//     republish) change nothing anywhere.
//   - Invalid messages count nowhere (InvalidMessages).
//   - An order's elements in an aggregation: key pais or cliente_id, one
//     element keyed by that field (as the order carries it) with importe =
//     importe_total, unidades = the sum of cantidades, pedidos 1. Key sku,
//     one element per distinct SKU (trimmed, upper-cased) with importe =
//     sum of cantidad x precio_unitario and unidades = sum of cantidades
//     over its lines, pedidos 1 (so a cell's pedidos counts distinct
//     orders); a line whose SKU is empty after trimming is in no element
//     and gives a SKUMissing. An order with no element in an aggregation
//     (no line with a SKU) is not in it: no fate, no drop, no effect on its
//     watermark.
//   - Per aggregation and per window of the event time (Spec.WindowsOf):
//     the (order, window) is dropped when end + L <= W of that aggregation
//     at delivery (one Drop, whatever the number of elements), else every
//     element counts in its (window, key) cell; a delivery emits no pane.
//   - Each aggregation has its own watermark: M and last over the orders
//     it accepted in at least one window, its own D and I, advanced by every
//     tick; its own panes, by docs/event-time.md's trigger.
//
// Apply returns the panes of every aggregation that the event emitted
// (Pane.Aggregation tells them apart); the accessors taking a name answer
// for one aggregation and panic on an unknown name.
type Multi struct {
	aggs    []*agg
	byName  map[string]*agg
	now     time.Time
	seen    map[string]bool // pedido_id: the per-order dedup record
	invalid map[string]bool // message ids
	missing []SKUMissing
}

// NewMulti returns a model of the aggregations specs, each valid, with a
// distinct name and a key Multi knows. It panics otherwise.
func NewMulti(specs ...window.Spec) *Multi {
	m := &Multi{byName: map[string]*agg{}, seen: map[string]bool{}, invalid: map[string]bool{}}
	if len(specs) == 0 {
		panic("windowtest.NewMulti: no aggregation")
	}
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			panic(fmt.Sprintf("windowtest.NewMulti: %v", err))
		}
		if m.byName[s.Name] != nil {
			panic(fmt.Sprintf("windowtest.NewMulti: two aggregations named %s", s.Name))
		}
		switch s.KeyField {
		case KeyPais, KeyClienteID, KeySKU:
		default:
			panic(fmt.Sprintf("windowtest.NewMulti: %s: key %q is none of pais, cliente_id, sku", s.Name, s.KeyField))
		}
		a := newAgg(s)
		m.aggs = append(m.aggs, a)
		m.byName[s.Name] = a
	}
	return m
}

// Apply plays one event and returns the panes it emitted, in emission
// order. It panics if events go back in processing time.
func (m *Multi) Apply(e MultiEvent) []window.Pane {
	if e.Now.Before(m.now) {
		panic(fmt.Sprintf("windowtest: event at %s after one at %s", e.Now, m.now))
	}
	m.now = e.Now
	before := make([]int, len(m.aggs))
	for i, a := range m.aggs {
		before[i] = len(a.panes)
	}
	o := e.Order
	switch {
	case e.Kind == Tick:
		for _, a := range m.aggs {
			a.tick(e.Now)
		}
	case e.Kind != Deliver:
		panic(fmt.Sprintf("windowtest: unknown event kind %v", e.Kind))
	case e.Invalid != "":
		m.invalid[e.MessageID] = true
	case !m.seen[o.PedidoID]:
		m.seen[o.PedidoID] = true
		for _, a := range m.aggs {
			elems, missing := Elements(a.spec.KeyField, o)
			for _, i := range missing {
				m.missing = append(m.missing, SKUMissing{Aggregation: a.spec.Name, PedidoID: o.PedidoID, Line: i, ReceivedAt: e.Now})
			}
			a.deliver(o.PedidoID, o.EventTime, elems, e.Now)
		}
	}
	// Aggregations act one after the other, so this is emission order.
	var out []window.Pane
	for i, a := range m.aggs {
		out = append(out, a.panes[before[i]:]...)
	}
	return out
}

// Elements computes an order's elements under key with big integers,
// ascending by key, and the indexes of its lines without a SKU, as the
// contract of Multi says.
func Elements(key string, o order.Order) (elems []Element, missing []int) {
	if key != KeySKU {
		var units big.Int
		for _, l := range o.Lineas {
			units.Add(&units, big.NewInt(l.Cantidad))
		}
		k, _ := o.Field(key)
		return []Element{{Key: k, Measures: measures(o.ImporteTotal.BigNanos(), &units, 1)}}, nil
	}
	type acc struct{ imp, units big.Int }
	bySKU := map[string]*acc{}
	for i, l := range o.Lineas {
		sku := strings.ToUpper(strings.TrimSpace(l.SKU))
		if sku == "" {
			missing = append(missing, i)
			continue
		}
		s := bySKU[sku]
		if s == nil {
			s = &acc{}
			bySKU[sku] = s
		}
		s.imp.Add(&s.imp, new(big.Int).Mul(l.PrecioUnitario.BigNanos(), big.NewInt(l.Cantidad)))
		s.units.Add(&s.units, big.NewInt(l.Cantidad))
	}
	for _, sku := range slices.Sorted(maps.Keys(bySKU)) {
		s := bySKU[sku]
		elems = append(elems, Element{Key: sku, Measures: measures(&s.imp, &s.units, 1)})
	}
	return elems, missing
}

func measures(importeNanos, units *big.Int, pedidos int64) window.Measures {
	d, err := numeric.FromBigNanos(importeNanos)
	if err != nil || !units.IsInt64() {
		panic("windowtest: measures overflow; generate smaller orders")
	}
	return window.Measures{Importe: d, Pedidos: pedidos, Unidades: units.Int64()}
}

func (m *Multi) agg(name string) *agg {
	a := m.byName[name]
	if a == nil {
		panic(fmt.Sprintf("windowtest: no aggregation %q in the model", name))
	}
	return a
}

// Watermark (zero: none yet), Panes (in emission order), Drops (in the
// order dropped), Fates (per (order, window) of the orders it holds elements
// of) and Final (the exact sum of the accepted elements of every (window,
// key), which the dashboard must show once Settled) are aggregation name's.
func (m *Multi) Watermark(name string) time.Time                        { return m.agg(name).w }
func (m *Multi) Panes(name string) []window.Pane                        { return slices.Clone(m.agg(name).panes) }
func (m *Multi) Drops(name string) []Drop                               { return slices.Clone(m.agg(name).drops) }
func (m *Multi) Fates(name string) map[OrderWindow]Fate                 { return maps.Clone(m.agg(name).fates) }
func (m *Multi) Final(name string) map[window.WindowKey]window.Measures { return m.agg(name).final() }

// Settled reports whether every accepted element of every aggregation has
// been emitted in a pane.
func (m *Multi) Settled() bool {
	return !slices.ContainsFunc(m.aggs, func(a *agg) bool { return !a.settled() })
}

// SKUMissing returns the lines without a SKU, in the order recorded.
func (m *Multi) SKUMissing() []SKUMissing { return slices.Clone(m.missing) }

// Orders returns the distinct pedido_ids of valid deliveries, sorted: the
// dedup records a system must hold.
func (m *Multi) Orders() []string { return slices.Sorted(maps.Keys(m.seen)) }

// InvalidMessages returns the distinct message ids of invalid messages, sorted.
func (m *Multi) InvalidMessages() []string { return slices.Sorted(maps.Keys(m.invalid)) }
