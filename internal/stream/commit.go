package stream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// Firestore's limits on one transaction are 500 writes and 10 MiB of
// requests; a batch that would pass these margins below them is split.
const (
	maxTxWrites = 480
	maxTxBytes  = 8 << 20
	// docOverhead is what a write costs besides its payload in the
	// estimate: path, field names, timestamps.
	docOverhead = 1 << 10
)

// commitOrders runs the order transactions of one aggregation for items,
// in order, as many as the transaction limits require (usually one), and
// returns the outbox rows they wrote.
func (p *Processor) commitOrders(ctx context.Context, a aggregation, ai int, items []*item, bs *BatchInfo) ([]pending, error) {
	var written []pending
	for rest := items; len(rest) > 0; {
		n, rows, err := p.orderTx(ctx, a, ai, rest, bs)
		bs.Transactions++
		if err != nil {
			return written, err
		}
		written = append(written, rows...)
		rest = rest[n:]
	}
	return written, nil
}

// cellGroup is what one transaction does to one (window, key).
type cellGroup struct {
	wk   window.WindowKey
	late bool // emits the late correction pane with its orders (Ld = 0)
	// Otherwise the orders are summed into delta n of the cell.
	n      int
	delta  window.Shard
	orders int // items of the transaction in the cell, duplicates included
	// late: the cell and its deltas as read, then updated in memory.
	view    cellView
	folded  bool
	maxTime time.Time // newest event and acceptance times folded, for the notice
	last    time.Time
	touched bool
}

// orderTx handles a prefix of items in one transaction of aggregation a, as
// if one after the other, and returns how many it handled. It reads the
// watermark and every item's dedup record, then the deltas the on-time
// orders add to and, for late orders whose pane is due at once, their cells
// with every delta; it never reads a document that only the tick writes
// besides the watermark, so orders contend with the tick only there and in
// a cell whose late correction they emit.
func (p *Processor) orderTx(ctx context.Context, a aggregation, ai int, items []*item, bs *BatchInfo) (int, []pending, error) {
	s := a.spec
	var (
		done    int
		written []pending
		outs    []Outcome
	)
	// Each item's dedup record and cell, known before the transaction.
	ops := make([]string, len(items))
	wks := make([]window.WindowKey, len(items))
	for i, it := range items {
		ops[i] = a.paths.order(it.o.PedidoID)
		wks[i] = window.WindowKey{Window: s.WindowOf(it.o.EventTime), Key: it.keys[ai]}
	}
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		bs.Attempts++
		done, written, outs = 0, nil, make([]Outcome, len(items))
		overflow := make([]string, len(items))

		paths := []string{a.paths.watermark}
		index := map[string]int{}
		for _, op := range ops {
			if _, ok := index[op]; !ok {
				index[op] = len(paths)
				paths = append(paths, op)
			}
		}
		docs, err := tx.Get(paths...)
		if err != nil {
			return err
		}
		var ws window.WatermarkState
		if err := decodeDoc(docs[0], &ws); err != nil {
			return err
		}
		wm := ws.Watermark
		lateness := make([]window.Lateness, len(items))
		for i, wk := range wks {
			lateness[i] = s.Classify(wk.Window, wm)
		}
		records := map[string]orderDoc{}
		for op, i := range index {
			if docs[i].Exists {
				var rec orderDoc
				if err := decodeDoc(docs[i], &rec); err != nil {
					return err
				}
				records[op] = rec
			}
		}

		// The cells the new orders go to, and what to read for them.
		groups := map[window.WindowKey]*cellGroup{}
		var cells []*cellGroup
		for i, it := range items {
			if _, dup := records[ops[i]]; dup {
				continue
			}
			l, wk := lateness[i], wks[i]
			if l == window.TooLate {
				continue
			}
			if groups[wk] == nil {
				g := &cellGroup{wk: wk, late: l == window.Late && s.LateDelay == 0, n: s.ShardOf(it.o.PedidoID)}
				groups[wk] = g
				cells = append(cells, g)
			}
		}
		// A cell with one order in the batch and none from this instance in
		// the last second is not hot: its delta is this instance's, so that
		// at low traffic a cell's orders gather in one delta per instance
		// instead of one per order (fewer documents for the tick to list and
		// read). A hot cell's batches spread over the deltas by their first
		// pedido_id, for commits not to meet on one document.
		var first *item
		for i, it := range items {
			if g := groups[wks[i]]; g != nil {
				g.orders++
				first = it
			}
		}
		for _, g := range cells {
			if !p.hot.touch(a.paths.cell(g.wk), first.now) && g.orders < 2 {
				g.n = p.instanceDelta(s)
			}
		}
		var deltaPaths []string
		var deltaOf []*cellGroup
		for _, g := range cells {
			if g.late {
				if g.view, err = p.readCell(tx, a, g.wk, nil, true); err != nil {
					return err
				}
				continue
			}
			deltaPaths = append(deltaPaths, a.paths.delta(g.wk, g.n))
			deltaOf = append(deltaOf, g)
		}
		if len(deltaPaths) > 0 {
			ddocs, err := tx.Get(deltaPaths...)
			if err != nil {
				return err
			}
			for i, d := range ddocs {
				var dd deltaDoc
				if err := decodeDoc(d, &dd); err != nil {
					return err
				}
				deltaOf[i].delta = dd.Part
			}
		}

		// One order after the other, in memory, until the transaction is full.
		writes, bytes := 0, 0
		var entries []entry
		for i, it := range items {
			op, wk := ops[i], wks[i]
			w := wk.Window
			out := Outcome{Aggregation: s.Name, Window: w, Key: wk.Key}
			if rec, dup := records[op]; dup {
				out.Fate, out.Recorded = Duplicate, rec.Fate
				outs[i], done = out, i+1
				continue
			}
			out.Watermark, out.Lateness = wm, lateness[i]
			g := groups[wk]
			need, size := 1, docOverhead
			switch {
			case out.Lateness == window.TooLate:
				need, size = 2, 2*docOverhead+len(it.push.Delivery.Message.Data)
			case !g.touched && g.late:
				need += 3 + len(g.view.deltas)
			case !g.touched:
				need++
			case g.late:
				need++
			}
			if writes+need > maxTxWrites || (i > 0 && bytes+size > maxTxBytes) {
				break
			}
			rec := orderDoc{MessageID: clip(it.push.Delivery.Message.ID(), maxIdentityBytes), WindowStart: w.Start, Key: wk.Key, Watermark: wm, ReceivedAt: it.now}
			if out.Lateness == window.TooLate {
				out.Fate, rec.Fate = TooLate, TooLate
				entries = append(entries, p.rows.discardEntry(tooLateRowID(s.Name, it.o.PedidoID), discard{
					PedidoID: it.o.PedidoID, Aggregation: s.Name, Reason: ReasonTooLate,
					EventTime: it.o.EventTime.UTC(), WindowStart: w.Start, Watermark: wm, ReceivedAt: it.now,
					MessageID: rec.MessageID, Raw: rawMessage(it.push.Delivery.Message.Data, it.push.Delivery.Message.Attributes),
				}))
				records[op] = rec
				outs[i], done = out, i+1
				writes, bytes = writes+need, bytes+size
				continue
			}
			wo := window.Order{ID: it.o.PedidoID, Key: wk.Key, EventTime: it.o.EventTime, Measures: it.ms}
			pane, err := acceptInto(s, g, wo, wm, it.now)
			if errors.Is(err, window.ErrOverflow) {
				// The window's totals would leave NUMERIC's range: no retry
				// can ever succeed, so the message is dead-lettered.
				overflow[i] = fmt.Sprintf("invalid: aggregation %s: %v", s.Name, err)
				done = i + 1
				continue
			}
			if err != nil {
				return err
			}
			g.touched = true
			if pane != nil {
				out.Panes = []window.Pane{*pane}
				entries = append(entries, p.rows.paneEntry(*pane))
			}
			out.Fate, rec.Fate = Accepted, Accepted
			records[op] = rec
			outs[i], done = out, i+1
			writes, bytes = writes+need, bytes+size
		}
		if done == 0 {
			return errors.New("one order exceeds a transaction's limits") // unreachable with MaxShards <= 256
		}

		// Writes: dedup records, deltas, late cells, outbox rows.
		for i, it := range items[:done] {
			if overflow[i] != "" || outs[i].Fate == Duplicate {
				continue
			}
			op := ops[i]
			rec := records[op]
			expire := it.now.Add(DedupRetention)
			if rec.Fate == Accepted {
				expire = dedupExpiry(it.now, s.ExpiryOf(outs[i].Window).Add(s.OutOfOrderness))
			}
			if err := set(tx, op, rec, expire); err != nil {
				return err
			}
		}
		for _, g := range cells {
			if !g.touched {
				continue
			}
			if err := p.writeGroup(tx, a, g); err != nil {
				return err
			}
		}
		for _, e := range entries {
			pe, err := p.writeEntry(tx, a.paths.outbox, e)
			if err != nil {
				return err
			}
			written = append(written, pe)
		}
		for i := range items[:done] {
			if overflow[i] != "" {
				items[i].invalid = overflow[i]
			}
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	for i, it := range items[:done] {
		if it.invalid == "" {
			it.res.Aggregations = append(it.res.Aggregations, outs[i])
		}
	}
	return done, written, nil
}

// acceptInto adds one order to its cell group in memory: to the group's
// delta, or, for a late order whose correction is due at once, to the cell
// itself, returning that pane.
func acceptInto(s window.Spec, g *cellGroup, o window.Order, wm, now time.Time) (*window.Pane, error) {
	if !g.late {
		d, err := s.Accept(g.delta, window.PaneState{}, o, wm, now)
		if err != nil {
			return nil, err
		}
		g.delta = d
		return nil, nil
	}
	v := &g.view
	if !g.folded {
		// The deltas read become part of the cell, which the pane covers.
		f, err := v.fold(v.cell.State)
		if err != nil {
			return nil, err
		}
		g.maxTime, g.last = newest(v.parts...)
		v.cell.Folded, g.folded = f, true
	}
	f, err := s.Accept(v.cell.Folded, v.cell.State, o, wm, now)
	if err != nil {
		return nil, err
	}
	c, err := window.Combine(v.cell.State, []window.Shard{f})
	if err != nil {
		return nil, err
	}
	out, err := s.OnLateOrder(v.wk, v.cell.State, c, wm, now)
	if err != nil {
		return nil, err
	}
	if out.Pane != nil {
		if f, err = fold(out.State, f); err != nil {
			return nil, err
		}
	}
	v.cell.State, v.cell.Folded = out.State, f
	g.maxTime, g.last = newest(window.Shard{MaxEventTime: g.maxTime, LastAccepted: g.last}, window.Shard{MaxEventTime: o.EventTime.UTC(), LastAccepted: now})
	return out.Pane, nil
}

// writeGroup writes what a transaction did to one cell. A late cell leaves
// a notice delta holding only the newest times of what it folded, so that
// the tick still sees them for the watermark and finds a cell it has not
// indexed yet.
func (p *Processor) writeGroup(tx docstore.Tx, a aggregation, g *cellGroup) error {
	d := deltaDoc{WindowStart: g.wk.Window.Start, WindowEnd: g.wk.Window.End, Key: g.wk.Key, N: g.n, Part: g.delta}
	if !g.late {
		return set(tx, a.paths.delta(g.wk, g.n), d, time.Time{})
	}
	v := g.view
	v.cell.Shards = max(v.cell.Shards, a.spec.Shards)
	if err := set(tx, v.path, v.cell, time.Time{}); err != nil {
		return err
	}
	for _, dp := range v.deltas {
		if err := tx.Delete(dp); err != nil {
			return fmt.Errorf("delete %s: %w", dp, err)
		}
	}
	d.N = g.n % v.cell.Shards
	d.Part = window.Shard{MaxEventTime: g.maxTime, LastAccepted: g.last}
	return set(tx, a.paths.delta(g.wk, d.N), d, time.Time{})
}

// instanceDelta is this process's delta number in spec s.
func (p *Processor) instanceDelta(s window.Spec) int {
	h := fnv.New32a()
	h.Write([]byte(p.instance))
	return int(h.Sum32() % uint32(max(1, s.Shards)))
}

// hotCells remembers when this process last wrote each cell, to tell a hot
// cell from a quiet one.
type hotCells struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// touch records a write of cell at now and reports whether the previous one
// was less than a second before.
func (h *hotCells) touch(cell string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil || len(h.last) > 10_000 {
		h.last = map[string]time.Time{} // forgetting only makes a cell look quiet once
	}
	prev, ok := h.last[cell]
	h.last[cell] = now
	d := now.Sub(prev)
	return ok && d < time.Second && d > -time.Second
}
