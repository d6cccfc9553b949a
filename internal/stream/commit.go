package stream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
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

// commitOrders runs the order transactions for items, in order, as many as
// the transaction limits require (usually one): each writes the deltas of
// every aggregation of its orders with their dedup records. It returns the
// outbox rows they wrote.
func (p *Processor) commitOrders(ctx context.Context, items []*item, legacy legacyState, bs *BatchInfo) ([]pending, error) {
	var written []pending
	for rest := items; len(rest) > 0; {
		n, rows, err := p.orderTx(ctx, rest, legacy, bs)
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
	orders    int // elements of the transaction in the cell, duplicates included
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
	// stored are the dedup records found, by pedido_id: the recorded fate
	// per aggregation (a legacy record names one aggregation).
	stored map[string]map[string]Fate
	aggs   []aggRead // per aggregation
}

// aggRead is what an order transaction read of one aggregation.
type aggRead struct {
	wm     time.Time
	groups []*cellGroup // the cells the new orders go to, as read
	// full are cells read with every delta for the exact headroom check,
	// by window and key.
	full map[window.WindowKey]cellView
}

// aggPlan is what an order transaction does in one aggregation, decided in
// memory from an aggRead by planAgg.
type aggPlan struct {
	outs []Outcome   // per item
	recs []aggRecord // per item: its part of the dedup record
	// cum and cumBytes are the writes and bytes after each item, so that
	// the transaction can cut the batch where the limits are reached.
	cum      []int
	cumBytes []int
	groups   []*cellGroup
	entries  []entry
	// wants are cells to read in full before planning again.
	wants []window.WindowKey
	// bad is the item whose sums leave the range (-1: none), and why.
	bad    int
	reason string
	err    error // the state read cannot take an order; retrying may help
}

// orderTx handles a prefix of items in one transaction, as if one after the
// other, in every aggregation, and returns how many it handled. It reads
// each aggregation's watermark and every item's dedup record (and, while
// the upgrade from the per-aggregation records lasts, those), and then, for
// the cells the new orders go to, the delta they add to and the cell
// document (for the headroom check), or for late orders whose pane is due
// at once the cell with every delta. Orders contend with the tick on the
// watermark, on a cell the tick rewrites while they commit, and on a cell
// whose late correction they emit.
//
// The transaction is read, plan, write: planAgg decides in memory from what
// was read and may ask for more reads (the exact headroom check), and an
// order whose sums would leave their range in one aggregation is taken out
// of every one (it is invalid: it counts nowhere). The closure, which the
// store may run again, changes nothing outside it. The hot-cell memory is
// updated once the commit succeeded.
func (p *Processor) orderTx(ctx context.Context, items []*item, legacy legacyState, bs *BatchInfo) (int, []pending, error) {
	var (
		tp      txPlan
		written []pending
		rd      orderRead
	)
	specs := make([]window.Spec, len(p.aggs))
	for ai, a := range p.aggs {
		specs[ai] = a.spec
	}
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		bs.Attempts++
		var err error
		if rd, err = p.readOrders(tx, items, legacy); err != nil {
			return err
		}
		bad := map[int]string{}
		for {
			tp = planTx(specs, p.rows, items, rd, bad)
			if tp.err != nil {
				return tp.err
			}
			if len(tp.wants) == 0 {
				break
			}
			for _, w := range tp.wants {
				if rd.aggs[w.agg].full[w.wk], err = p.readCell(tx, p.aggs[w.agg], w.wk, nil, true); err != nil {
					return err
				}
			}
		}
		written, err = p.writeOrders(tx, items[:tp.n], tp.skip, tp.plans)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	for ai, a := range p.aggs {
		for _, g := range tp.plans[ai].groups {
			if g.touched {
				p.hot.touch(a.paths.cell(g.wk), items[0].now)
			}
		}
	}
	for i, it := range items[:tp.n] {
		if r, ok := tp.bad[i]; ok {
			it.invalid = r
			continue
		}
		for ai, a := range p.aggs {
			out := tp.plans[ai].outs[i]
			if tp.skip[i] {
				out = duplicateOutcome(a.spec, ai, it, rd.stored, tp.dup[i], tp.plans[ai])
			}
			it.res.Aggregations = append(it.res.Aggregations, out)
		}
	}
	return tp.n, written, nil
}

// txPlan is what an order transaction does in every aggregation.
type txPlan struct {
	plans []aggPlan // per aggregation, over items[:n]
	n     int       // the items handled: a prefix
	skip  []bool    // per item: not handled (a duplicate or invalid)
	dup   []int     // per item: the earlier item of the batch it repeats, -1 none
	bad   map[int]string
	wants []want // cells to read in full before planning again
	err   error
}

type want struct {
	agg int
	wk  window.WindowKey
}

// planTx plans items in every aggregation (specs, in configuration order)
// from what was read: the longest prefix that fits one transaction, where
// an order whose sums would leave their range in any aggregation is taken
// out of every one and recorded in bad (invalid: it counts nowhere). It is
// pure but for bad, which it fills; when it returns wants, the caller
// reads them into rd and calls it again with the same bad.
func planTx(specs []window.Spec, rows *rowMapper, items []*item, rd orderRead, bad map[int]string) txPlan {
	tp := txPlan{n: len(items), bad: bad}
	for {
		tp.skip, tp.dup = duplicates(items[:tp.n], rd.stored, bad)
		tp.plans = make([]aggPlan, len(specs))
		replan := false
		for ai, s := range specs {
			pl := planAgg(s, rows, ai, items[:tp.n], tp.skip, rd.aggs[ai])
			tp.plans[ai] = pl
			if pl.err != nil {
				tp.err = pl.err
				return tp
			}
			for _, wk := range pl.wants {
				tp.wants = append(tp.wants, want{agg: ai, wk: wk})
			}
			if pl.bad >= 0 && len(pl.wants) == 0 {
				bad[pl.bad], replan = pl.reason, true
				break
			}
		}
		if len(tp.wants) > 0 {
			return tp
		}
		if replan {
			continue
		}
		k := fits(tp.plans, tp.skip, tp.n)
		if k == 0 {
			// One order alone needs more writes than a transaction takes:
			// no retry can commit it.
			bad[0] = fmt.Sprintf("invalid: the order touches more documents than one transaction can write (%d)", maxTxWrites)
			tp.n = 1
			continue
		}
		if k < tp.n {
			tp.n = k
			continue
		}
		return tp
	}
}

// duplicates marks the items that are not handled: those recorded before
// (stored), those that repeat an earlier item of the batch (dup names it)
// and those found invalid (bad).
func duplicates(items []*item, stored map[string]map[string]Fate, bad map[int]string) (skip []bool, dup []int) {
	skip, dup = make([]bool, len(items)), make([]int, len(items))
	first := map[string]int{}
	for i, it := range items {
		dup[i] = -1
		if _, ok := bad[i]; ok {
			skip[i] = true
			continue
		}
		if _, ok := stored[it.o.PedidoID]; ok {
			skip[i] = true
			continue
		}
		if j, ok := first[it.o.PedidoID]; ok {
			skip[i], dup[i] = true, j
			continue
		}
		first[it.o.PedidoID] = i
	}
	return skip, dup
}

// fits returns the longest prefix of the n planned items whose writes and
// bytes, in every aggregation and with their dedup records, stay within a
// transaction's limits (the first item's bytes always fit).
func fits(plans []aggPlan, skip []bool, n int) int {
	records := 0
	for i := range n {
		if !skip[i] {
			records++
		}
		writes, bytes := records, records*docOverhead
		for _, pl := range plans {
			writes += pl.cum[i]
			bytes += pl.cumBytes[i]
		}
		if writes > maxTxWrites || (i > 0 && bytes > maxTxBytes) {
			return i
		}
	}
	return n
}

// duplicateOutcome is the outcome of a delivery already handled: by an
// earlier transaction (stored), or by item first of this one.
func duplicateOutcome(s window.Spec, ai int, it *item, stored map[string]map[string]Fate, first int, pl aggPlan) Outcome {
	out := Outcome{Aggregation: s.Name, Fate: Duplicate}
	if els := it.elems[ai]; len(els) > 0 {
		out.Window, out.Key = els[len(els)-1].wk.Window, els[len(els)-1].wk.Key
	} else {
		out.Window = s.WindowOf(it.o.EventTime)
	}
	if first >= 0 {
		out.Recorded = pl.outs[first].Fate
	} else {
		out.Recorded = stored[it.o.PedidoID][s.Name]
	}
	return out
}

// readOrders reads what planAgg needs: the watermarks and the dedup
// records (new and, while they can exist, legacy), then for each cell a
// new order goes to, its delta and cell document, or (late, Ld = 0) the
// cell with every delta.
func (p *Processor) readOrders(tx docstore.Tx, items []*item, legacy legacyState) (orderRead, error) {
	rd := orderRead{stored: map[string]map[string]Fate{}, aggs: make([]aggRead, len(p.aggs))}
	paths := make([]string, 0, len(p.aggs)+len(items))
	for _, a := range p.aggs {
		paths = append(paths, a.paths.watermark)
	}
	type lookup struct {
		pedidoID string
		agg      string // "" for the record of every aggregation
	}
	var looks []lookup
	seen := map[string]bool{}
	useLegacy := len(items) > 0 && legacy.active(items[0].now)
	for _, it := range items {
		id := it.o.PedidoID
		if seen[id] {
			continue
		}
		seen[id] = true
		paths = append(paths, dedupPath(id))
		looks = append(looks, lookup{pedidoID: id})
		if useLegacy {
			for _, a := range legacy.aggs {
				paths = append(paths, a.paths.legacyOrder(id))
				looks = append(looks, lookup{pedidoID: id, agg: a.spec.Name})
			}
		}
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return rd, err
	}
	for ai := range p.aggs {
		var ws window.WatermarkState
		if err := decodeDoc(docs[ai], &ws); err != nil {
			return rd, err
		}
		rd.aggs[ai] = aggRead{wm: ws.Watermark, full: map[window.WindowKey]cellView{}}
	}
	for i, l := range looks {
		d := docs[len(p.aggs)+i]
		if !d.Exists {
			continue
		}
		fates := rd.stored[l.pedidoID]
		if fates == nil {
			fates = map[string]Fate{}
			rd.stored[l.pedidoID] = fates
		}
		if l.agg != "" {
			var rec legacyOrderDoc
			if err := decodeDoc(d, &rec); err != nil {
				return rd, err
			}
			fates[l.agg] = rec.Fate
			continue
		}
		var rec dedupDoc
		if err := decodeDoc(d, &rec); err != nil {
			return rd, err
		}
		for name, r := range rec.Aggregations {
			fates[name] = r.Fate
		}
	}

	skip, _ := duplicates(items, rd.stored, nil)
	var get []string
	var of []*cellGroup
	for ai, a := range p.aggs {
		ar := &rd.aggs[ai]
		ar.groups = p.cellGroups(a, ai, items, skip, ar.wm)
		for _, g := range ar.groups {
			if g.late {
				if g.view, err = p.readCell(tx, a, g.wk, nil, true); err != nil {
					return rd, err
				}
				continue
			}
			g.deltaPath = a.paths.delta(g.wk, g.n)
			g.cell = cellDoc{WindowStart: g.wk.Window.Start, WindowEnd: g.wk.Window.End, Key: g.wk.Key, Shards: a.spec.Shards}
			get = append(get, g.deltaPath, a.paths.cell(g.wk))
			of = append(of, g)
		}
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

// cellGroups returns the cells of aggregation a that the new orders of
// items go to (not skipped, not too late), with the delta each adds to. A
// cell with one element in the batch and none from this instance in the
// last second is not hot: its delta is this instance's, so that at low
// traffic a cell's orders gather in one delta per instance instead of one
// per order (fewer documents for the tick to list and read). A hot cell's
// batches spread over the deltas by their first pedido_id, for commits not
// to meet on one document.
func (p *Processor) cellGroups(a aggregation, ai int, items []*item, skip []bool, wm time.Time) []*cellGroup {
	s := a.spec
	var groups []*cellGroup
	byWK := map[window.WindowKey]*cellGroup{}
	var now time.Time
	for i, it := range items {
		if skip[i] {
			continue
		}
		now = it.now
		for _, e := range it.elems[ai] {
			l := s.Classify(e.wk.Window, wm)
			if l == window.TooLate {
				continue
			}
			g := byWK[e.wk]
			if g == nil {
				g = &cellGroup{wk: e.wk, late: l == window.Late && s.LateDelay == 0, n: s.ShardOf(it.o.PedidoID)}
				byWK[e.wk] = g
				groups = append(groups, g)
			}
			g.orders++
		}
	}
	for _, g := range groups {
		if g.orders < 2 && !p.hot.recent(a.paths.cell(g.wk), now) {
			g.n = p.instanceDelta(s)
		}
	}
	return groups
}

// planAgg handles items one after the other, in memory, in aggregation s
// (the ai-th): the outcome of each, the sums of each cell, the pane of a
// late cell and the outbox rows. It is pure: ar is not changed (its groups
// are copied), so a plan can be made again after more reads or with fewer
// items. It stops at the first item whose sums leave their range (bad).
func planAgg(s window.Spec, rows *rowMapper, ai int, items []*item, skip []bool, ar aggRead) aggPlan {
	pl := aggPlan{outs: make([]Outcome, len(items)), recs: make([]aggRecord, len(items)),
		cum: make([]int, len(items)), cumBytes: make([]int, len(items)), bad: -1}
	groups := map[window.WindowKey]*cellGroup{}
	for _, g := range ar.groups {
		c := *g
		groups[g.wk] = &c
		pl.groups = append(pl.groups, &c)
	}
	writes, bytes := 0, 0
	for i, it := range items {
		if skip[i] {
			pl.cum[i], pl.cumBytes[i] = writes, bytes
			continue
		}
		out := Outcome{Aggregation: s.Name, Watermark: ar.wm}
		rec := aggRecord{Watermark: ar.wm}
		m := it.push.Delivery.Message
		msgID := clip(m.ID(), maxIdentityBytes)
		for _, line := range it.missing[ai] {
			out.SKUMissing = append(out.SKUMissing, line)
			pl.entries = append(pl.entries, rows.discardEntry(skuMissingRowID(s.Name, it.o.PedidoID, line), discard{
				PedidoID: it.o.PedidoID, Aggregation: s.Name, Reason: ReasonSKUMissing,
				EventTime: it.o.EventTime.UTC(), ReceivedAt: it.now, MessageID: msgID,
				Raw: rawLine(m.Data, m.Attributes, line),
			}))
			writes, bytes = writes+1, bytes+docOverhead+min(len(m.Data), MaxRawBytes)
		}
		dropped := map[time.Time]bool{}
		var last, lastAccepted *ElementOutcome
		for _, e := range it.elems[ai] {
			w := e.wk.Window
			eo := ElementOutcome{Window: w, Key: e.wk.Key, Lateness: s.Classify(w, ar.wm)}
			if eo.Lateness == window.TooLate {
				eo.Fate = TooLate
				out.Elements = append(out.Elements, eo)
				if !dropped[w.Start] {
					dropped[w.Start] = true
					rec.TooLate = append(rec.TooLate, w.Start)
					pl.entries = append(pl.entries, rows.discardEntry(tooLateRowIDOf(s, it.o.PedidoID, w), discard{
						PedidoID: it.o.PedidoID, Aggregation: s.Name, Reason: ReasonTooLate,
						EventTime: it.o.EventTime.UTC(), WindowStart: w.Start, Watermark: ar.wm, ReceivedAt: it.now,
						MessageID: msgID, Raw: rawMessage(m.Data, m.Attributes),
					}))
					writes, bytes = writes+1, bytes+docOverhead+min(len(m.Data), MaxRawBytes)
				}
				continue
			}
			g := groups[e.wk]
			need := 0
			switch {
			case !g.touched && g.late:
				need += 3 + len(g.view.deltas)
			case !g.touched:
				need++
			case g.late:
				need++
			}
			if !g.late && !g.touched && !g.cell.Exact {
				need++ // the cell, should the orders enter the exact headroom check
			}
			wo := window.Order{ID: it.o.PedidoID, Key: e.wk.Key, EventTime: it.o.EventTime, Measures: e.ms, Window: w}
			before := *g
			pane, err := acceptInto(s, g, wo, ar.wm, it.now)
			if err == nil && !g.late {
				var want bool
				want, err = headroom(g, ar.full)
				if want {
					*g = before
					pl.wants = append(pl.wants, e.wk)
					return pl
				}
			}
			if err != nil && !errors.Is(err, window.ErrOverflow) {
				pl.err = err
				return pl
			}
			if err != nil {
				// The window's totals would leave the range BigQuery
				// stores: no retry can ever succeed, so the message is
				// dead-lettered with the reason.
				pl.bad = i
				pl.reason = fmt.Sprintf("invalid: aggregation %s: window %s key %q: %v", s.Name, w.Start.Format(time.RFC3339), e.wk.Key, err)
				return pl
			}
			g.touched = true
			if pane != nil {
				out.Panes = append(out.Panes, *pane)
				pl.entries = append(pl.entries, rows.paneEntry(*pane))
				bytes += docOverhead
			}
			if !containsTime(rec.Accepted, w.Start) {
				rec.Accepted = append(rec.Accepted, w.Start)
			}
			eo.Fate = Accepted
			out.Elements = append(out.Elements, eo)
			lastAccepted = &out.Elements[len(out.Elements)-1]
			writes, bytes = writes+need, bytes+need*docOverhead
		}
		if len(out.Elements) > 0 {
			last = &out.Elements[len(out.Elements)-1]
		}
		switch {
		case lastAccepted != nil:
			out.Fate = Accepted
			last = lastAccepted
		case last != nil:
			out.Fate = TooLate
		default:
			out.Fate = NoElements
			out.Window = s.WindowOf(it.o.EventTime)
		}
		if last != nil {
			out.Window, out.Key, out.Lateness = last.Window, last.Key, last.Lateness
		}
		rec.Fate = out.Fate
		slices.SortFunc(rec.Accepted, time.Time.Compare)
		pl.outs[i], pl.recs[i] = out, rec
		pl.cum[i], pl.cumBytes[i] = writes, bytes
	}
	return pl
}

func containsTime(ts []time.Time, t time.Time) bool {
	return slices.ContainsFunc(ts, t.Equal)
}

// writeOrders writes the plans of items: each handled order's dedup record
// and, per aggregation, its deltas, late cells, cells that entered the
// exact headroom check, and outbox rows.
func (p *Processor) writeOrders(tx docstore.Tx, items []*item, skip []bool, plans []aggPlan) ([]pending, error) {
	for i, it := range items {
		if skip[i] {
			continue
		}
		rec := dedupDoc{MessageID: clip(it.push.Delivery.Message.ID(), maxIdentityBytes), ReceivedAt: it.now,
			Aggregations: make(map[string]aggRecord, len(p.aggs))}
		for ai, a := range p.aggs {
			rec.Aggregations[a.spec.Name] = plans[ai].recs[i]
		}
		if err := set(tx, dedupPath(it.o.PedidoID), rec, recordExpiry(p.specs, rec, it.now)); err != nil {
			return nil, err
		}
	}
	var written []pending
	for ai, a := range p.aggs {
		pl := plans[ai]
		for _, g := range pl.groups {
			if !g.touched {
				continue
			}
			if err := p.writeGroup(tx, a, g); err != nil {
				return nil, err
			}
		}
		for _, e := range pl.entries {
			pe, err := p.writeEntry(tx, a.paths.outbox, e)
			if err != nil {
				return nil, err
			}
			written = append(written, pe)
		}
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
