package window_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	ord "github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// driver plays single-aggregation streams (windowtest.Event, the Model's
// input) through multiDriver, one event per transaction: each order is a
// message keyed by pais with one line carrying all its units, as in
// windowtest's TestMultiReducesToModel.
type driver struct{ *multiDriver }

func newDriver(spec window.Spec) driver { return driver{newMultiDriver([]window.Spec{spec})} }

// agg is the documents of the driver's one aggregation.
func (d driver) agg() *aggDocs { return d.aggs[0] }

// apply runs one event and returns the panes it recorded.
func (d driver) apply(e windowtest.Event) ([]window.Pane, error) {
	if e.Kind == windowtest.Tick {
		return d.tick(e.Now)
	}
	return d.deliverBatch([]windowtest.MultiEvent{asMulti(e)})
}

func asMulti(e windowtest.Event) windowtest.MultiEvent {
	me := windowtest.MultiEvent{Kind: e.Kind, Now: e.Now, MessageID: e.MessageID, Invalid: e.Invalid,
		Order: ord.Order{PedidoID: e.Order.ID, Pais: e.Order.Key, ImporteTotal: e.Order.Measures.Importe,
			EventTime: e.Order.EventTime}}
	if u := e.Order.Measures.Unidades; u > 0 {
		me.Order.Lineas = []ord.Line{{SKU: "X", Cantidad: u}}
	}
	return me
}

type cellDocs struct {
	State  window.PaneState
	Shards []window.Partial
}

// driverShards is how many partial sums the drivers spread a (window, key)
// over: more than one, so that Combine meets sums whose marks disagree, as
// it does when a tick adds parts up; few, so that orders share them too.
const driverShards = 3

// shardOf picks an order's partial sum, stably, so that a redelivered order
// lands where its first delivery did.
func shardOf(pedidoID string) int {
	h := fnv.New32a()
	h.Write([]byte(pedidoID)) // hash.Hash.Write never fails
	return int(h.Sum32() % driverShards)
}

func roundTrip[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("encode %T: %w", v, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode %T %s: %w", v, b, err)
	}
	return out, nil
}

func sortedKeys[V any](m map[window.WindowKey]V) []window.WindowKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b window.WindowKey) int {
		return cmp.Or(a.Window.Start.Compare(b.Window.Start), cmp.Compare(a.Key, b.Key))
	})
}

// multiDriver is driver for several aggregations fed whole orders, the way
// the stream processor is meant to run them: one dedup record per order for
// every aggregation; per aggregation its own watermark document, cells and
// outbox; an order's elements (one per order, or one per SKU of its lines)
// accepted once per window of its event time, each with Order.Window set.
// A batch of deliveries is one transaction: it reads every watermark once
// and sees its own earlier writes.
type multiDriver struct {
	aggs    []*aggDocs
	seen    map[string]bool // dedup records, per order
	invalid map[string]bool
	missing []windowtest.SKUMissing
}

type aggDocs struct {
	spec  window.Spec
	ws    window.WatermarkState
	cells map[window.WindowKey]*cellDocs
	// sessions: the open sessions of each key, one document per key
	sessions map[string][]window.Session
	panes    []window.Pane
	drops    []windowtest.Drop
	fates    map[windowtest.OrderWindow]windowtest.Fate
}

func newMultiDriver(specs []window.Spec) *multiDriver {
	d := &multiDriver{seen: map[string]bool{}, invalid: map[string]bool{}}
	for _, s := range specs {
		d.aggs = append(d.aggs, &aggDocs{spec: s, cells: map[window.WindowKey]*cellDocs{}, sessions: map[string][]window.Session{},
			fates: map[windowtest.OrderWindow]windowtest.Fate{}})
	}
	return d
}

// deliverBatch handles consecutive deliveries in one transaction. Like the
// model, it emits no pane: the ticks do.
func (d *multiDriver) deliverBatch(batch []windowtest.MultiEvent) ([]window.Pane, error) {
	wms := make([]time.Time, len(d.aggs))
	for i, a := range d.aggs {
		wms[i] = a.ws.Watermark
	}
	for _, e := range batch {
		if err := d.deliver(e, wms); err != nil {
			return nil, fmt.Errorf("deliver %s: %w", e.MessageID, err)
		}
	}
	return nil, nil
}

func (d *multiDriver) deliver(e windowtest.MultiEvent, wms []time.Time) error {
	if e.Invalid != "" {
		d.invalid[e.MessageID] = true
		return nil
	}
	o := e.Order
	if d.seen[o.PedidoID] {
		return nil
	}
	for i, a := range d.aggs {
		elems, missing, err := elementsOf(a.spec.KeyField, o)
		if err != nil {
			return err
		}
		for _, line := range missing {
			d.missing = append(d.missing, windowtest.SKUMissing{Aggregation: a.spec.Name, PedidoID: o.PedidoID, Line: line, ReceivedAt: e.Now})
		}
		if len(elems) == 0 {
			continue
		}
		for _, w := range a.spec.WindowsOf(o.EventTime) {
			if err := a.deliverWindow(o, elems, w, wms[i], e.Now); err != nil {
				return err
			}
		}
	}
	d.seen[o.PedidoID] = true
	return nil
}

// deliverWindow counts an order's elements in window w, or drops the
// (order, window) when it is too late.
func (a *aggDocs) deliverWindow(o ord.Order, elems []keyed, w window.Window, wm, now time.Time) error {
	ow := windowtest.OrderWindow{PedidoID: o.PedidoID, WindowStart: w.Start}
	lateness := a.spec.Classify(w, wm)
	if lateness == window.TooLate {
		a.fates[ow] = windowtest.Dropped
		a.drops = append(a.drops, windowtest.Drop{PedidoID: o.PedidoID, WindowStart: w.Start, Watermark: wm, ReceivedAt: now})
		return nil
	}
	if a.spec.Session() {
		for _, el := range elems {
			ss, err := a.spec.AcceptSession(a.sessions[el.key], window.Order{
				ID: o.PedidoID, Key: el.key, EventTime: o.EventTime, Measures: el.m}, wm, now)
			if err != nil {
				return err
			}
			if a.sessions[el.key], err = roundTrip(ss); err != nil {
				return err
			}
		}
		a.fates[ow] = windowtest.Accepted
		return nil
	}
	for _, el := range elems {
		wk := window.WindowKey{Window: w, Key: el.key}
		c := a.cells[wk]
		if c == nil {
			c = &cellDocs{Shards: make([]window.Partial, driverShards)}
		}
		n := shardOf(o.PedidoID)
		sh, err := a.spec.Accept(c.Shards[n], c.State, window.Order{
			ID: o.PedidoID, Key: el.key, EventTime: o.EventTime, Measures: el.m, Window: w}, wm, now)
		if err != nil {
			return err
		}
		// Only the shard written goes through the store's encoding; the
		// others are as stored already.
		if sh, err = roundTrip(sh); err != nil {
			return err
		}
		shards := slices.Clone(c.Shards)
		shards[n] = sh
		c.Shards = shards
		a.cells[wk] = c
	}
	a.fates[ow] = windowtest.Accepted
	return nil
}

// keyed is one element of an order: what it adds to one key.
type keyed struct {
	key string
	m   window.Measures
}

// elementsOf is the implementation's side of "keys from lines", written
// with package numeric and window.Measures as a processor would.
func elementsOf(key string, o ord.Order) ([]keyed, []int, error) {
	if key != windowtest.KeySKU {
		qs := make([]int64, len(o.Lineas))
		for i, l := range o.Lineas {
			qs[i] = l.Cantidad
		}
		m, err := window.OrderMeasures(o.ImporteTotal, qs...)
		if err != nil {
			return nil, nil, err
		}
		v, ok := o.Field(key)
		if !ok {
			return nil, nil, fmt.Errorf("no key field %q", key)
		}
		return []keyed{{key: v, m: m}}, nil, nil
	}
	var out []keyed
	var missing []int
	for i, l := range o.Lineas {
		sku := strings.ToUpper(strings.TrimSpace(l.SKU))
		if sku == "" {
			missing = append(missing, i)
			continue
		}
		amount, err := l.PrecioUnitario.MulInt(l.Cantidad)
		if err != nil {
			return nil, nil, fmt.Errorf("lineas[%d]: %w", i, err)
		}
		m := window.Measures{Importe: amount, Pedidos: 1, Unidades: l.Cantidad}
		j := slices.IndexFunc(out, func(k keyed) bool { return k.key == sku })
		if j < 0 {
			out = append(out, keyed{key: sku, m: m})
			continue
		}
		// Another line of the same SKU: its amounts add, the order counts once.
		m.Pedidos = 0
		if out[j].m, err = out[j].m.Add(m); err != nil {
			return nil, nil, err
		}
	}
	return out, missing, nil
}

// tick advances every aggregation's watermark and runs its panes, as the
// one timer function does for all of them.
func (d *multiDriver) tick(now time.Time) ([]window.Pane, error) {
	var out []window.Pane
	for _, a := range d.aggs {
		before := len(a.panes)
		if err := a.tick(now); err != nil {
			return nil, fmt.Errorf("%s: %w", a.spec.Name, err)
		}
		out = append(out, a.panes[before:]...)
	}
	return out, nil
}

func (a *aggDocs) tick(now time.Time) error {
	ws := a.ws
	contents := map[window.WindowKey]window.Content{}
	for wk, c := range a.cells {
		content, err := window.Combine(c.State, c.Shards)
		if err != nil {
			return err
		}
		contents[wk] = content
		ws = ws.Observe(content.MaxEventTime, content.LastAccepted)
	}
	for _, ss := range a.sessions {
		for _, x := range ss {
			ws = ws.Observe(x.Sum.MaxEventTime, x.Sum.LastAccepted)
		}
	}
	ws = a.spec.AdvanceWatermark(ws, now)
	if err := windowtest.CheckWatermark(a.spec, a.ws.Watermark, ws.Watermark, now); err != nil {
		return err
	}
	if err := a.tickSessions(ws.Watermark, now); err != nil {
		return err
	}
	for _, wk := range sortedKeys(a.cells) {
		c := a.cells[wk]
		out, err := a.spec.OnTick(wk, c.State, contents[wk], ws.Watermark, now)
		if err != nil {
			return err
		}
		if out.Pane != nil {
			stored, err := roundTrip(*out.Pane)
			if err != nil {
				return err
			}
			a.panes = append(a.panes, stored)
		}
		if out.Expired {
			delete(a.cells, wk)
			continue
		}
		if out.State != c.State { // unchanged: the tick skips the write
			if c.State, err = roundTrip(out.State); err != nil {
				return err
			}
		}
	}
	var err error
	a.ws, err = roundTrip(ws)
	return err
}

// tickSessions runs the trigger of every open session, a key's sessions
// together as the key's document holds them.
func (a *aggDocs) tickSessions(wm, now time.Time) error {
	for _, key := range slices.Sorted(maps.Keys(a.sessions)) {
		var open []window.Session
		for _, x := range a.sessions[key] {
			out, err := a.spec.OnTickSession(key, x, wm, now)
			if err != nil {
				return err
			}
			for _, p := range out.Panes {
				stored, err := roundTrip(p)
				if err != nil {
					return err
				}
				a.panes = append(a.panes, stored)
			}
			if !out.Expired {
				open = append(open, out.Session)
			}
		}
		if len(open) == 0 {
			delete(a.sessions, key)
			continue
		}
		stored, err := roundTrip(open)
		if err != nil {
			return err
		}
		a.sessions[key] = stored
	}
	return nil
}

// multiSnapshot is the driver's durable state, for "changes nothing" checks.
type multiSnapshot struct {
	Seen, Invalid, Missing int
	Aggs                   []aggSnapshot
}

type aggSnapshot struct {
	WS                  window.WatermarkState
	Cells               map[window.WindowKey]cellDocs
	Sessions            map[string][]window.Session
	Panes, Drops, Fates int
}

func (d *multiDriver) snapshot() multiSnapshot {
	s := multiSnapshot{Seen: len(d.seen), Invalid: len(d.invalid), Missing: len(d.missing)}
	for _, a := range d.aggs {
		cells := map[window.WindowKey]cellDocs{}
		for wk, c := range a.cells {
			cells[wk] = cellDocs{State: c.State, Shards: slices.Clone(c.Shards)}
		}
		sessions := map[string][]window.Session{}
		for k, ss := range a.sessions {
			sessions[k] = slices.Clone(ss)
		}
		s.Aggs = append(s.Aggs, aggSnapshot{WS: a.ws, Cells: cells, Sessions: sessions, Panes: len(a.panes), Drops: len(a.drops), Fates: len(a.fates)})
	}
	return s
}
