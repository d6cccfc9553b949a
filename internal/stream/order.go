package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	// elementBytes estimates an element's share of a dedup record.
	elementBytes = 160
)

// commitOrders runs as many order transactions for items as the
// transaction limits require (usually one).
func (p *Processor) commitOrders(ctx context.Context, items []*item, bs *BatchInfo) ([]pending, error) {
	var written []pending
	for rest := items; len(rest) > 0; {
		n, rows, err := p.orderTx(ctx, rest, bs)
		bs.Transactions++
		if err != nil {
			return written, err
		}
		written = append(written, rows...)
		rest = rest[n:]
	}
	return written, nil
}

type orderRead struct {
	ctl    controlDoc
	stored map[string]map[string]Fate // by pedido_id, the recorded fate per aggregation
}

// aggPlan is what an order transaction does in one aggregation.
type aggPlan struct {
	outs     []Outcome   // per item
	recs     []aggRecord // per item: its part of the dedup record
	cum      []int       // writes after each item
	cumBytes []int
	entries  []entry
}

// orderTx handles a prefix of items in one transaction, as if one after the
// other, in every aggregation, and returns how many it handled (see the
// package comment, "Costs"). The closure, which the store may run again,
// changes nothing outside it.
func (p *Processor) orderTx(ctx context.Context, items []*item, bs *BatchInfo) (int, []pending, error) {
	var (
		n       int
		plans   []aggPlan
		skip    []bool
		dup     []int
		bad     map[int]string
		rd      orderRead
		written []pending
	)
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		bs.Attempts++
		var err error
		if rd, err = p.readOrders(tx, items); err != nil {
			return err
		}
		bad = map[int]string{}
		n = len(items)
		// Plan, and plan again with an order found invalid or with fewer
		// orders, until the prefix fits one transaction.
		for {
			skip, dup = duplicates(items[:n], rd.stored, bad)
			plans = make([]aggPlan, len(p.aggs))
			for ai, a := range p.aggs {
				plans[ai] = p.planAgg(a.spec, ai, items[:n], skip, rd.ctl)
			}
			if i, size := oversized(plans, skip, n); i >= 0 {
				// One document holds an order's elements: one this large
				// could never be written, so no retry can help.
				bad[i] = fmt.Sprintf("invalid: the order counts in too many windows and keys for one dedup record (%d bytes of elements, at most %d)", size, maxRecordElements)
				continue
			}
			k := fits(plans, skip, n)
			if k == 0 {
				bad[0] = fmt.Sprintf("invalid: the order needs more writes than one transaction takes (%d)", maxTxWrites)
				n = 1
				continue
			}
			if k == n {
				break
			}
			n = k
		}
		written, err = p.writeOrders(tx, rd.ctl, items[:n], skip, plans)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	for i, it := range items[:n] {
		if r, ok := bad[i]; ok {
			it.invalid = r
			continue
		}
		for ai, a := range p.aggs {
			out := plans[ai].outs[i]
			if skip[i] {
				out = duplicateOutcome(a.spec, ai, it, rd.stored, dup[i], plans[ai])
			}
			it.res.Aggregations = append(it.res.Aggregations, out)
		}
	}
	return n, written, nil
}

// duplicates marks the items that are not handled: recorded before, repeating
// an earlier item of the batch (dup names it) or found invalid.
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

// fits returns the longest prefix of the n planned items within a
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

// maxRecordElements bounds the encoded elements of one dedup record, well
// under a document's 1 MiB (the record's other fields are small).
const maxRecordElements = 768 << 10

// oversized returns the first of the n planned items whose elements would
// not fit one dedup record, and their size; -1 when all fit.
func oversized(plans []aggPlan, skip []bool, n int) (int, int) {
	for i := range n {
		if skip[i] {
			continue
		}
		count := 0
		for _, pl := range plans {
			count += len(pl.recs[i].Keys) + len(pl.recs[i].Accepted)
		}
		if count*elementBytes < maxRecordElements/2 {
			continue // the common case, without encoding anything
		}
		size := 0
		for _, pl := range plans {
			b, err := json.Marshal(pl.recs[i])
			if err != nil {
				return i, 0
			}
			size += len(b)
		}
		if size > maxRecordElements {
			return i, size
		}
	}
	return -1, 0
}

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

func (p *Processor) readOrders(tx docstore.Tx, items []*item) (orderRead, error) {
	rd := orderRead{stored: map[string]map[string]Fate{}}
	var ids []string
	paths := []string{controlPath}
	seen := map[string]bool{}
	for _, it := range items {
		if id := it.o.PedidoID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
			paths = append(paths, dedupPath(id))
		}
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return rd, err
	}
	if rd.ctl, err = decodeControl(docs[0]); err != nil {
		return rd, err
	}
	for i, id := range ids {
		if !docs[i+1].Exists {
			continue
		}
		var rec dedupDoc
		if err := decodeDoc(docs[i+1], &rec); err != nil {
			return rd, err
		}
		fates := map[string]Fate{}
		for name, r := range rec.Aggregations {
			fates[name] = r.Fate
		}
		rd.stored[id] = fates
	}
	return rd, nil
}

// planAgg handles items one after the other in memory, in aggregation s
// (the ai-th). It is pure, so a plan can be made again with fewer items.
func (p *Processor) planAgg(s window.Spec, ai int, items []*item, skip []bool, ctl controlDoc) aggPlan {
	wm := ctl.Aggs[s.Name].Watermark
	pl := aggPlan{outs: make([]Outcome, len(items)), recs: make([]aggRecord, len(items)),
		cum: make([]int, len(items)), cumBytes: make([]int, len(items))}
	writes, bytes := 0, 0
	for i, it := range items {
		if skip[i] {
			pl.cum[i], pl.cumBytes[i] = writes, bytes
			continue
		}
		out := Outcome{Aggregation: s.Name, Watermark: wm}
		rec := aggRecord{Watermark: wm}
		m := it.push.Delivery.Message
		drop := func(rowID string, d discard) {
			d.PedidoID, d.Aggregation, d.EventTime = it.o.PedidoID, s.Name, it.o.EventTime.UTC()
			d.ReceivedAt, d.MessageID = it.now, clip(m.ID(), maxIdentityBytes)
			pl.entries = append(pl.entries, p.rows.discardEntry(rowID, d))
			writes, bytes = writes+1, bytes+docOverhead+min(len(m.Data), MaxRawBytes)
		}
		for _, line := range it.missing[ai] {
			out.SKUMissing = append(out.SKUMissing, line)
			drop(skuMissingRowID(s.Name, it.o.PedidoID, line),
				discard{Reason: ReasonSKUMissing, Raw: rawMessage(m.Data, m.Attributes, &line)})
		}
		dropped := map[time.Time]bool{}
		for _, e := range it.elems[ai] {
			w := e.wk.Window
			eo := ElementOutcome{Window: w, Key: e.wk.Key, Lateness: s.Classify(w, wm)}
			if eo.Lateness == window.TooLate {
				eo.Fate = TooLate
				out.Elements = append(out.Elements, eo)
				if !dropped[w.Start] {
					dropped[w.Start] = true
					rec.TooLate = append(rec.TooLate, w.Start)
					drop(tooLateRowID(s, it.o.PedidoID, w), discard{Reason: ReasonTooLate, WindowStart: w.Start,
						Watermark: wm, Raw: rawMessage(m.Data, m.Attributes, nil)})
				}
				continue
			}
			bytes += elementBytes
			if n := len(rec.Keys); n == 0 || rec.Keys[n-1].Key != e.wk.Key { // elements come by key
				k := recKey{Key: e.wk.Key}
				if e.ms != it.ms {
					k.M = &e.ms
				}
				rec.Keys = append(rec.Keys, k)
			}
			if !slices.ContainsFunc(rec.Accepted, w.Start.Equal) {
				rec.Accepted = append(rec.Accepted, w.Start)
			}
			eo.Fate = Accepted
			out.Elements = append(out.Elements, eo)
		}
		// The outcome is the last accepted element's, else the last one's.
		out.Fate = NoElements
		if len(out.Elements) == 0 { // the window the order would have had
			out.Window = s.WindowOf(it.o.EventTime)
		}
		for _, eo := range out.Elements {
			if out.Fate != Accepted || eo.Fate == Accepted {
				out.Fate, out.Window, out.Key, out.Lateness = eo.Fate, eo.Window, eo.Key, eo.Lateness
			}
		}
		rec.Fate = out.Fate
		slices.SortFunc(rec.Accepted, time.Time.Compare)
		pl.outs[i], pl.recs[i] = out, rec
		pl.cum[i], pl.cumBytes[i] = writes, bytes
	}
	return pl
}

func (p *Processor) writeOrders(tx docstore.Tx, ctl controlDoc, items []*item, skip []bool, plans []aggPlan) ([]pending, error) {
	for i, it := range items {
		if skip[i] {
			continue
		}
		rec := dedupDoc{PedidoID: it.o.PedidoID, MessageID: clip(it.push.Delivery.Message.ID(), maxIdentityBytes), ReceivedAt: it.now,
			EventTime: it.o.EventTime.UTC(), Gen: ctl.Gen, M: it.ms,
			Aggregations: make(map[string]aggRecord, len(p.aggs))}
		for ai, a := range p.aggs {
			rec.Aggregations[a.spec.Name] = plans[ai].recs[i]
		}
		d, err := encodeDoc(dedupPath(it.o.PedidoID), rec, recordExpiry(p.specs, rec, it.now))
		if err != nil {
			return nil, err
		}
		d.Tag = genTag(ctl.Gen)
		if err := tx.Set(d); err != nil {
			return nil, fmt.Errorf("write %s: %w", d.Path, err)
		}
	}
	var written []pending
	for ai, a := range p.aggs {
		for _, e := range plans[ai].entries {
			pe, err := p.writeEntry(tx, a.paths.outbox, e)
			if err != nil {
				return nil, err
			}
			written = append(written, pe)
		}
	}
	return written, nil
}

// writeWindow writes a window's state documents that changed. Parts never
// shrink, so none is left behind.
func writeWindow(tx docstore.Tx, a aggregation, ws *windowState) error {
	docs, parts, err := encodeParts(a, ws.entry, ws.keys)
	if err != nil {
		return err
	}
	ws.entry.Parts = parts
	for i, d := range docs {
		var read docstore.Doc
		if i < len(ws.read) {
			read = ws.read[i]
		}
		if err := setIfChanged(tx, d, read); err != nil {
			return err
		}
	}
	return nil
}
