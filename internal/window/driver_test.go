package window_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// driver is the smallest processor that uses package window the way the
// stream processor is meant to: each delivery and each tick is one
// "transaction" over documents (the watermark, one pane state and N shards
// per window and key, dedup records), and every document written is stored
// as JSON, so what is tested is what a store would hold.
type driver struct {
	spec    window.Spec
	ws      window.WatermarkState
	seen    map[string]windowtest.Fate // dedup records, kept past expiry
	invalid map[string]bool
	cells   map[window.WindowKey]*cellDocs
	panes   []window.Pane // the outbox, in emission order
	drops   []windowtest.Drop
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

func newDriver(spec window.Spec) *driver {
	return &driver{
		spec:    spec,
		seen:    map[string]windowtest.Fate{},
		invalid: map[string]bool{},
		cells:   map[window.WindowKey]*cellDocs{},
	}
}

// apply runs one event and returns the panes it recorded.
func (d *driver) apply(e windowtest.Event) ([]window.Pane, error) {
	before := len(d.panes)
	var err error
	switch e.Kind {
	case windowtest.Deliver:
		err = d.deliver(e)
	case windowtest.Tick:
		err = d.tick(e.Now)
	default:
		err = fmt.Errorf("unknown event kind %v", e.Kind)
	}
	return slices.Clone(d.panes[before:]), err
}

// deliver is the order transaction. It reads the watermark document, the
// order's dedup record, the pane state of its window and key and its shard
// (all shards when a late pane must be emitted now), and writes the dedup
// record, the shard and, for a late correction, the pane state and the pane.
func (d *driver) deliver(e windowtest.Event) error {
	if e.Invalid != "" {
		d.invalid[e.MessageID] = true
		return nil
	}
	o := e.Order
	if _, dup := d.seen[o.ID]; dup {
		return nil
	}
	wm := d.ws.Watermark
	w := d.spec.WindowOf(o.EventTime)
	lateness := d.spec.Classify(w, wm)
	if lateness == window.TooLate {
		d.seen[o.ID] = windowtest.Dropped
		d.drops = append(d.drops, windowtest.Drop{PedidoID: o.ID, WindowStart: w.Start, Watermark: wm, ReceivedAt: e.Now})
		return nil
	}
	wk := window.WindowKey{Window: w, Key: o.Key}
	c := d.cells[wk]
	if c == nil {
		c = &cellDocs{Shards: make([]window.Partial, driverShards)}
	}
	n := shardOf(o.ID)
	sh, err := d.spec.Accept(c.Shards[n], c.State, o, wm, e.Now)
	if err != nil {
		return err
	}
	shards := slices.Clone(c.Shards)
	shards[n] = sh
	// Commit.
	if c.Shards, err = roundTrip(shards); err != nil {
		return err
	}
	d.cells[wk] = c
	d.seen[o.ID] = windowtest.Accepted
	return nil
}

// tick is the timer transaction: it reads the watermark document and every
// open window's pane state and shards, and writes the watermark, the pane
// states that changed and their panes, and deletes expired windows.
func (d *driver) tick(now time.Time) error {
	ws := d.ws
	contents := map[window.WindowKey]window.Content{}
	for wk, c := range d.cells {
		content, err := window.Combine(c.State, c.Shards)
		if err != nil {
			return err
		}
		contents[wk] = content
		ws = ws.Observe(content.MaxEventTime, content.LastAccepted)
	}
	ws = d.spec.AdvanceWatermark(ws, now)
	if err := windowtest.CheckWatermark(d.spec, d.ws.Watermark, ws.Watermark, now); err != nil {
		return err
	}
	for _, wk := range sortedKeys(d.cells) {
		c := d.cells[wk]
		out, err := d.spec.OnTick(wk, c.State, contents[wk], ws.Watermark, now)
		if err != nil {
			return err
		}
		if err := d.record(out.Pane); err != nil {
			return err
		}
		if out.Expired {
			delete(d.cells, wk)
			continue
		}
		if c.State, err = roundTrip(out.State); err != nil {
			return err
		}
	}
	var err error
	d.ws, err = roundTrip(ws)
	return err
}

func (d *driver) record(p *window.Pane) error {
	if p == nil {
		return nil
	}
	stored, err := roundTrip(*p)
	if err != nil {
		return err
	}
	d.panes = append(d.panes, stored)
	return nil
}

// snapshot is the driver's durable state, for "changes nothing" checks.
type snapshot struct {
	WS window.WatermarkState
	// Dedup records are only ever added, never rewritten, so their count
	// tells whether any was written (cloning them per event is quadratic).
	Seen    int
	Cells   map[window.WindowKey]cellDocs
	Panes   int
	Drops   int
	Invalid int
}

func (d *driver) snapshot() snapshot {
	cells := map[window.WindowKey]cellDocs{}
	for wk, c := range d.cells {
		cells[wk] = cellDocs{State: c.State, Shards: slices.Clone(c.Shards)}
	}
	return snapshot{WS: d.ws, Seen: len(d.seen), Cells: cells,
		Panes: len(d.panes), Drops: len(d.drops), Invalid: len(d.invalid)}
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
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b window.WindowKey) int {
		return cmp.Or(a.Window.Start.Compare(b.Window.Start), cmp.Compare(a.Key, b.Key))
	})
	return keys
}
