package window_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	ord "github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// apply plays a tick, or consecutive deliveries, as one transaction.
func (d *driver) apply(step ...windowtest.MultiEvent) ([]window.Pane, error) {
	if step[0].Kind == windowtest.Tick {
		return d.tick(step[0].Now)
	}
	return d.deliverBatch(step)
}

type cellDocs struct {
	State  window.PaneState
	Shards []window.Partial // never written in place: a snapshot may share them
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

// stored is v as a store gives it back: through JSON.
func stored[T any](v T) T {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic(fmt.Sprintf("store %T %s: %v", v, b, err))
	}
	return out
}

// driver plays streams through package window the way the stream processor
// is meant to run them: one dedup record per order for every aggregation;
// per aggregation its own watermark document, cells and outbox; an order's
// elements (one per order, or one per SKU of its lines: keys from lines are
// package stream's, held to the model by streamtest, so the driver takes
// the model's) accepted once per window of its event time, each with
// Order.Window set. A batch of deliveries is one transaction: it reads every
// watermark once and sees its own earlier writes.
type driver struct {
	aggs    []*aggDocs
	seen    map[string]bool // dedup records, per order
	invalid map[string]bool
}

type aggDocs struct {
	spec     window.Spec
	ws       window.WatermarkState
	cells    map[window.WindowKey]cellDocs
	sessions map[string][]window.Session // one document per key, replaced whole
	panes    []window.Pane
	drops    []windowtest.Drop
	fates    map[windowtest.OrderWindow]windowtest.Fate
}

func newDriver(specs ...window.Spec) *driver {
	d := &driver{seen: map[string]bool{}, invalid: map[string]bool{}}
	for _, s := range specs {
		d.aggs = append(d.aggs, &aggDocs{spec: s, cells: map[window.WindowKey]cellDocs{}, sessions: map[string][]window.Session{},
			fates: map[windowtest.OrderWindow]windowtest.Fate{}})
	}
	return d
}

// deliverBatch handles consecutive deliveries in one transaction. Like the
// model, it emits no pane: the ticks do.
func (d *driver) deliverBatch(batch []windowtest.MultiEvent) ([]window.Pane, error) {
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

func (d *driver) deliver(e windowtest.MultiEvent, wms []time.Time) error {
	o := e.Order
	switch {
	case e.Invalid != "":
		d.invalid[e.MessageID] = true
		return nil
	case d.seen[o.PedidoID]:
		return nil
	}
	for i, a := range d.aggs {
		elems, _ := windowtest.Elements(a.spec.KeyField, o)
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
func (a *aggDocs) deliverWindow(o ord.Order, elems []windowtest.Element, w window.Window,
	wm, now time.Time) error {
	ow := windowtest.OrderWindow{PedidoID: o.PedidoID, WindowStart: w.Start}
	if a.spec.Classify(w, wm) == window.TooLate {
		a.fates[ow] = windowtest.Dropped
		a.drops = append(a.drops, windowtest.Drop{PedidoID: o.PedidoID, WindowStart: w.Start, Watermark: wm, ReceivedAt: now})
		return nil
	}
	a.fates[ow] = windowtest.Accepted
	for _, el := range elems {
		eo := window.Order{ID: o.PedidoID, Key: el.Key, EventTime: o.EventTime, Measures: el.Measures}
		if a.spec.Session() {
			ss, err := a.spec.AcceptSession(a.sessions[el.Key], eo, wm, now)
			if err != nil {
				return err
			}
			a.sessions[el.Key] = stored(ss)
			continue
		}
		eo.Window = w
		wk := window.WindowKey{Window: w, Key: el.Key}
		c := a.cells[wk]
		if c.Shards == nil {
			c.Shards = make([]window.Partial, driverShards)
		}
		n := shardOf(o.PedidoID)
		sh, err := a.spec.Accept(c.Shards[n], c.State, eo, wm, now)
		if err != nil {
			return err
		}
		c.Shards = slices.Clone(c.Shards)
		c.Shards[n] = stored(sh) // the others are as stored already
		a.cells[wk] = c
	}
	return nil
}

// tick advances every aggregation's watermark and runs its panes, as the
// one timer function does for all of them.
func (d *driver) tick(now time.Time) ([]window.Pane, error) {
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
	contents := map[window.WindowKey]window.Partial{}
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
	for _, key := range slices.Sorted(maps.Keys(a.sessions)) {
		var open []window.Session
		for _, x := range a.sessions[key] {
			out, err := a.spec.OnTickSession(key, x, ws.Watermark, now)
			if err != nil {
				return err
			}
			a.panes = append(a.panes, stored(out.Panes)...)
			if !out.Expired {
				open = append(open, out.Session)
			}
		}
		if a.sessions[key] = stored(open); len(open) == 0 {
			delete(a.sessions, key)
		}
	}
	for _, wk := range slices.SortedFunc(maps.Keys(a.cells), func(a, b window.WindowKey) int {
		return cmp.Or(a.Window.Start.Compare(b.Window.Start), cmp.Compare(a.Key, b.Key))
	}) {
		c := a.cells[wk]
		out, err := a.spec.OnTick(wk, c.State, contents[wk], ws.Watermark, now)
		if err != nil {
			return err
		}
		if out.Pane != nil {
			a.panes = append(a.panes, stored(*out.Pane))
		}
		switch {
		case out.Expired:
			delete(a.cells, wk)
		case out.State != c.State: // unchanged: the tick skips the write
			c.State = stored(out.State)
			a.cells[wk] = c
		}
	}
	a.ws = stored(ws)
	return nil
}

// snapshot is the driver's durable state, for "changes nothing" checks.
type snapshot struct {
	Seen, Invalid int
	Aggs          []aggSnapshot
}

type aggSnapshot struct {
	WS                  window.WatermarkState
	Cells               map[window.WindowKey]cellDocs
	Sessions            map[string][]window.Session
	Panes, Drops, Fates int
}

func (d *driver) snapshot() snapshot {
	s := snapshot{Seen: len(d.seen), Invalid: len(d.invalid)}
	for _, a := range d.aggs {
		s.Aggs = append(s.Aggs, aggSnapshot{WS: a.ws, Cells: maps.Clone(a.cells), Sessions: maps.Clone(a.sessions),
			Panes: len(a.panes), Drops: len(a.drops), Fates: len(a.fates)})
	}
	return s
}
