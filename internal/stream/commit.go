package stream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
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
	n         int
	deltaPath string
	delta     window.Shard
	orders    int // items of the transaction in the cell, duplicates included
	// cell is the cell document as read (its defaults when missing): what
	// the headroom check needs of it. cellErr: it does not decode.
	cell    cellDoc
	cellErr error
	// late: the cell and its deltas as read, then updated in memory.
	view    cellView
	folded  bool
	maxTime time.Time // newest event and acceptance times folded, for the notice
	last    time.Time
	touched bool
	// exact: the orders of this transaction passed the exact headroom
	// check, so the cell is written with cellDoc.Exact set.
	exact bool
}

// orderRead is what an order transaction read, before deciding anything.
type orderRead struct {
	wm      time.Time
	records map[string]orderDoc // dedup records that exist, by path
	groups  []*cellGroup        // the cells the new orders go to, as read
	// full are cells read with every delta for the exact headroom check,
	// by window and key.
	full map[window.WindowKey]cellView
}

// orderPlan is what an order transaction does, decided in memory from an
// orderRead by planOrders.
type orderPlan struct {
	done    int        // items handled: a prefix
	outs    []Outcome  // per item handled
	invalid []string   // per item: why a window total would leave its range
	records []orderDoc // per item: the dedup record to write (Fate "" for none)
	groups  []*cellGroup
	entries []entry // outbox rows
	// wants are cells to read in full before planning again.
	wants []window.WindowKey
	err   error // the state read cannot take an order; retrying may help
}

// orderTx handles a prefix of items in one transaction of aggregation a, as
// if one after the other, and returns how many it handled. It reads the
// watermark, every item's dedup record, and then, for the cells the new
// orders go to, the delta they add to and the cell document (for the
// headroom check), or for late orders whose pane is due at once the cell
// with every delta. Orders contend with the tick on the watermark, on a
// cell the tick rewrites while they commit, and on a cell whose late
// correction they emit.
//
// The transaction is read, plan, write: planOrders decides in memory from
// what was read and may ask for more reads (the exact headroom check); the
// closure, which the store may run again, changes nothing outside it. The
// hot-cell memory is updated once the commit succeeded.
func (p *Processor) orderTx(ctx context.Context, a aggregation, ai int, items []*item, bs *BatchInfo) (int, []pending, error) {
	s := a.spec
	// Each item's dedup record and cell, known before the transaction.
	ops := make([]string, len(items))
	wks := make([]window.WindowKey, len(items))
	for i, it := range items {
		ops[i] = a.paths.order(it.o.PedidoID)
		wks[i] = window.WindowKey{Window: s.WindowOf(it.o.EventTime), Key: it.keys[ai]}
	}
	var (
		pl      orderPlan
		written []pending
	)
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		bs.Attempts++
		rd, err := p.readOrders(tx, a, items, ops, wks)
		if err != nil {
			return err
		}
		for {
			pl = planOrders(s, p.rows, items, ops, wks, rd)
			if pl.err != nil {
				return pl.err
			}
			if len(pl.wants) == 0 {
				break
			}
			for _, wk := range pl.wants {
				if rd.full[wk], err = p.readCell(tx, a, wk, nil, true); err != nil {
					return err
				}
			}
		}
		if pl.done == 0 {
			return errors.New("one order exceeds a transaction's limits") // unreachable with MaxShards <= 256
		}
		written, err = p.writeOrders(tx, a, items, ops, pl)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	if len(items) > 0 {
		for _, g := range pl.groups {
			if g.touched {
				p.hot.touch(a.paths.cell(g.wk), items[0].now)
			}
		}
	}
	for i, it := range items[:pl.done] {
		if pl.invalid[i] != "" {
			it.invalid = pl.invalid[i]
			continue
		}
		it.res.Aggregations = append(it.res.Aggregations, pl.outs[i])
	}
	return pl.done, written, nil
}

// readOrders reads what planOrders needs: the watermark and the dedup
// records, then for each cell a new order goes to, its delta and cell
// document, or (late, Ld = 0) the cell with every delta.
func (p *Processor) readOrders(tx docstore.Tx, a aggregation, items []*item, ops []string, wks []window.WindowKey) (orderRead, error) {
	s := a.spec
	rd := orderRead{records: map[string]orderDoc{}, full: map[window.WindowKey]cellView{}}
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
		return rd, err
	}
	var ws window.WatermarkState
	if err := decodeDoc(docs[0], &ws); err != nil {
		return rd, err
	}
	rd.wm = ws.Watermark
	for op, i := range index {
		if docs[i].Exists {
			var rec orderDoc
			if err := decodeDoc(docs[i], &rec); err != nil {
				return rd, err
			}
			rd.records[op] = rec
		}
	}

	rd.groups = p.cellGroups(a, items, ops, wks, rd)
	var get []string
	var of []*cellGroup
	for _, g := range rd.groups {
		if g.late {
			if g.view, err = p.readCell(tx, a, g.wk, nil, true); err != nil {
				return rd, err
			}
			continue
		}
		g.deltaPath = a.paths.delta(g.wk, g.n)
		get = append(get, g.deltaPath, a.paths.cell(g.wk))
		of = append(of, g)
	}
	if len(get) == 0 {
		return rd, nil
	}
	gdocs, err := tx.Get(get...)
	if err != nil {
		return rd, err
	}
	for i, g := range of {
		var dd deltaDoc
		if err := decodeDoc(gdocs[2*i], &dd); err != nil {
			return rd, err
		}
		g.delta = dd.Part
		g.cell = cellDoc{WindowStart: g.wk.Window.Start, WindowEnd: g.wk.Window.End, Key: g.wk.Key, Shards: s.Shards}
		if err := decodeDoc(gdocs[2*i+1], &g.cell); errors.Is(err, ErrUnreadableState) {
			// The tick reports this cell; its orders wait in deltas for
			// the repair (see headroom).
			g.cellErr = err
		} else if err != nil {
			return rd, err
		}
	}
	return rd, nil
}

// cellGroups returns the cells the new orders of items go to (not
// duplicates, not too late), with the delta each adds to. A cell with one
// order in the batch and none from this instance in the last second is not
// hot: its delta is this instance's, so that at low traffic a cell's orders
// gather in one delta per instance instead of one per order (fewer
// documents for the tick to list and read). A hot cell's batches spread
// over the deltas by their first pedido_id, for commits not to meet on one
// document.
func (p *Processor) cellGroups(a aggregation, items []*item, ops []string, wks []window.WindowKey, rd orderRead) []*cellGroup {
	s := a.spec
	var groups []*cellGroup
	byWK := map[window.WindowKey]*cellGroup{}
	for i, it := range items {
		if _, dup := rd.records[ops[i]]; dup {
			continue
		}
		l, wk := s.Classify(wks[i].Window, rd.wm), wks[i]
		if l == window.TooLate {
			continue
		}
		if byWK[wk] == nil {
			g := &cellGroup{wk: wk, late: l == window.Late && s.LateDelay == 0, n: s.ShardOf(it.o.PedidoID)}
			byWK[wk] = g
			groups = append(groups, g)
		}
	}
	var now time.Time
	for i, it := range items {
		if g := byWK[wks[i]]; g != nil {
			g.orders++
			now = it.now
		}
	}
	for _, g := range groups {
		if g.orders < 2 && !p.hot.recent(a.paths.cell(g.wk), now) {
			g.n = p.instanceDelta(s)
		}
	}
	return groups
}

// planOrders handles items one after the other, in memory, until the
// transaction is full: the outcome of each, the sums of each cell, the
// pane of a late cell and the outbox rows. It is pure: rd is not changed
// (its groups are copied), so a plan can be made again after more reads.
func planOrders(s window.Spec, rows *rowMapper, items []*item, ops []string, wks []window.WindowKey, rd orderRead) orderPlan {
	pl := orderPlan{outs: make([]Outcome, len(items)), invalid: make([]string, len(items)), records: make([]orderDoc, len(items))}
	groups := map[window.WindowKey]*cellGroup{}
	for _, g := range rd.groups {
		c := *g
		groups[g.wk] = &c
		pl.groups = append(pl.groups, &c)
	}
	records := make(map[string]orderDoc, len(rd.records))
	maps.Copy(records, rd.records)
	writes, bytes := 0, 0
	for i, it := range items {
		op, wk := ops[i], wks[i]
		w := wk.Window
		out := Outcome{Aggregation: s.Name, Window: w, Key: wk.Key}
		if rec, dup := records[op]; dup {
			out.Fate, out.Recorded = Duplicate, rec.Fate
			pl.outs[i], pl.done = out, i+1
			continue
		}
		out.Watermark, out.Lateness = rd.wm, s.Classify(w, rd.wm)
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
		if g != nil && !g.late && !g.touched && !g.cell.Exact {
			need++ // the cell, should the orders enter the exact headroom check
		}
		if writes+need > maxTxWrites || (i > 0 && bytes+size > maxTxBytes) {
			break
		}
		rec := orderDoc{MessageID: clip(it.push.Delivery.Message.ID(), maxIdentityBytes), WindowStart: w.Start, Key: wk.Key, Watermark: rd.wm, ReceivedAt: it.now}
		if out.Lateness == window.TooLate {
			out.Fate, rec.Fate = TooLate, TooLate
			pl.entries = append(pl.entries, rows.discardEntry(tooLateRowID(s.Name, it.o.PedidoID), discard{
				PedidoID: it.o.PedidoID, Aggregation: s.Name, Reason: ReasonTooLate,
				EventTime: it.o.EventTime.UTC(), WindowStart: w.Start, Watermark: rd.wm, ReceivedAt: it.now,
				MessageID: rec.MessageID, Raw: rawMessage(it.push.Delivery.Message.Data, it.push.Delivery.Message.Attributes),
			}))
			records[op], pl.records[i] = rec, rec
			pl.outs[i], pl.done = out, i+1
			writes, bytes = writes+need, bytes+size
			continue
		}
		wo := window.Order{ID: it.o.PedidoID, Key: wk.Key, EventTime: it.o.EventTime, Measures: it.ms}
		before := *g
		pane, err := acceptInto(s, g, wo, rd.wm, it.now)
		if err == nil && !g.late {
			var want bool
			want, err = headroom(g, rd.full)
			if want {
				*g = before
				pl.wants = append(pl.wants, wk)
				return pl
			}
		}
		if err != nil && !errors.Is(err, window.ErrOverflow) {
			pl.err = err
			return pl
		}
		if err != nil {
			// The window's totals would leave the range BigQuery stores:
			// no retry can ever succeed, so the message is dead-lettered
			// with the reason.
			*g = before
			pl.invalid[i] = fmt.Sprintf("invalid: aggregation %s: window %s key %q: %v", s.Name, w.Start.Format(time.RFC3339), wk.Key, err)
			pl.done = i + 1
			continue
		}
		g.touched = true
		if pane != nil {
			out.Panes = []window.Pane{*pane}
			pl.entries = append(pl.entries, rows.paneEntry(*pane))
		}
		out.Fate, rec.Fate = Accepted, Accepted
		records[op], pl.records[i] = rec, rec
		pl.outs[i], pl.done = out, i+1
		writes, bytes = writes+need, bytes+size
	}
	return pl
}

// writeOrders writes a plan: dedup records, deltas, late cells, cells that
// entered the exact headroom check, outbox rows.
func (p *Processor) writeOrders(tx docstore.Tx, a aggregation, items []*item, ops []string, pl orderPlan) ([]pending, error) {
	s := a.spec
	for i, it := range items[:pl.done] {
		rec := pl.records[i]
		if rec.Fate == "" {
			continue // duplicate, or dead-lettered
		}
		expire := it.now.Add(DedupRetention)
		if rec.Fate == Accepted {
			expire = dedupExpiry(it.now, s.ExpiryOf(pl.outs[i].Window).Add(s.OutOfOrderness))
		}
		if err := set(tx, ops[i], rec, expire); err != nil {
			return nil, err
		}
	}
	for _, g := range pl.groups {
		if !g.touched {
			continue
		}
		if err := p.writeGroup(tx, a, g); err != nil {
			return nil, err
		}
	}
	var written []pending
	for _, e := range pl.entries {
		pe, err := p.writeEntry(tx, a.paths.outbox, e)
		if err != nil {
			return nil, err
		}
		written = append(written, pe)
	}
	return written, nil
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
		if g.exact && !g.cell.Exact {
			c := g.cell
			c.Exact = true
			if err := set(tx, a.paths.cell(g.wk), c, time.Time{}); err != nil {
				return err
			}
		}
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

// touch records a committed write of cell at now.
func (h *hotCells) touch(cell string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil || len(h.last) > 10_000 {
		h.last = map[string]time.Time{} // forgetting only makes a cell look quiet once
	}
	h.last[cell] = now
}

// recent reports whether this process wrote cell less than a second
// before now.
func (h *hotCells) recent(cell string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, ok := h.last[cell]
	d := now.Sub(prev)
	return ok && d < time.Second && d > -time.Second
}
