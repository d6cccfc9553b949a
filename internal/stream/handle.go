package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// Push is one push delivery and the processing time it arrived at.
type Push struct {
	Delivery order.Delivery
	Now      time.Time
}

// Handle processes one push delivery. A nil error means the message's
// effect is durable: answer 2xx. An error is transient: answer non-2xx so
// that Pub/Sub redelivers; the redelivery is deduplicated. With batching
// on, Handle returns once the batch it joined committed or failed.
func (p *Processor) Handle(ctx context.Context, d order.Delivery, now time.Time) (Result, error) {
	ps := Push{Delivery: d, Now: now}
	if p.batches != nil {
		return p.batches.handle(ctx, ps)
	}
	rs, err := p.HandleBatch(ctx, []Push{ps})
	return rs[0], err
}

// HandleBatch processes deliveries with exactly the effect of handling them
// one after the other at their own processing times, in one transaction
// unless Firestore's limits split it. It returns one Result per delivery. An
// error means some effect may not be durable: answer every delivery non-2xx
// (the redeliveries of those committed are duplicates). Rows the sink
// refuses stay in the outbox for the next tick; HandleBatch still succeeds.
func (p *Processor) HandleBatch(ctx context.Context, pushes []Push) ([]Result, error) {
	items := make([]*item, len(pushes))
	for i, ps := range pushes {
		items[i] = p.prepare(ps)
	}
	bs := &BatchInfo{ID: p.batchID(), Deliveries: len(pushes)}
	results := func() []Result {
		out := make([]Result, len(items))
		for i, it := range items {
			out[i] = it.res
			out[i].Batch = *bs
		}
		return out
	}
	var written []pending
	live := slices.DeleteFunc(slices.Clone(items), func(it *item) bool { return it.invalid != "" })
	if len(live) > 0 {
		err := p.ensureControl(ctx)
		if err == nil {
			written, err = p.commitOrders(ctx, live, bs)
		}
		if err != nil {
			return results(), fmt.Errorf("handle %d orders: %w", len(live), err)
		}
	}
	var errs []error
	for _, it := range items {
		if it.invalid == "" {
			continue
		}
		bs.Transactions++
		bs.Attempts++
		if err := p.handleInvalid(ctx, it); err != nil {
			errs = append(errs, err)
		}
	}
	if len(written) > 0 {
		if _, err := p.flush(ctx, written); err != nil {
			// The rows are durable in the outbox: the next tick appends them.
			p.log.WarnContext(ctx, "outbox flush failed; the next tick retries", "orders", len(items), "rows", len(written), "error", err.Error())
			for _, it := range items {
				for i := range it.res.Aggregations {
					o := &it.res.Aggregations[i]
					o.Pending = o.rows()
				}
			}
		}
	}
	for _, it := range items {
		if it.invalid == "" {
			p.logResult(ctx, it.res)
		}
	}
	return results(), errors.Join(errs...)
}

func (p *Processor) batchID() string {
	return p.instance + "-" + strconv.FormatUint(p.batchSeq.Add(1), 10)
}

type item struct {
	push    Push
	now     time.Time
	res     Result
	o       order.Order
	ms      window.Measures
	elems   [][]element // per aggregation: what the order counts in
	missing [][]int     // per aggregation: lines without a SKU
	invalid string      // the dead-letter reason; "" for a valid order
}

// prepare parses a delivery. Everything that makes it invalid is known
// here, except a window total leaving NUMERIC's range, which only the fold
// can see.
func (p *Processor) prepare(ps Push) *item {
	now := ps.Now.UTC()
	m := ps.Delivery.Message
	it := &item{push: ps, now: now, res: Result{MessageID: m.ID()}}
	rules := order.Rules{IsCountry: p.isCountry, Now: now, MaxClockSkew: p.opts.maxClockSkew}
	o, err := rules.Parse(m.Data, m.Attributes)
	if err != nil {
		it.invalid = invalidReason(err)
		return it
	}
	it.o, it.res.PedidoID = o, o.PedidoID
	qs := make([]int64, len(o.Lineas))
	for i, l := range o.Lineas {
		qs[i] = l.Cantidad
	}
	if it.ms, err = window.OrderMeasures(o.ImporteTotal, qs...); err != nil {
		it.invalid = "invalid: " + err.Error()
		return it
	}
	it.elems, it.missing = make([][]element, len(p.aggs)), make([][]int, len(p.aggs))
	for i, a := range p.aggs {
		if it.elems[i], it.missing[i], err = elementsOf(a.spec, o, it.ms); err != nil {
			it.invalid = fmt.Sprintf("invalid: aggregation %s: %v", a.spec.Name, err)
			return it
		}
	}
	return it
}

func (p *Processor) logResult(ctx context.Context, r Result) {
	if r.Invalid != "" {
		p.log.InfoContext(ctx, "message dead-lettered", "message_id", r.MessageID, "pedido_id", r.PedidoID,
			"fate", Invalid, "reason", r.Invalid, "duplicate", r.Duplicate)
		return
	}
	for _, o := range r.Aggregations {
		// INFO, accepted ones too: the monitoring panels count accepted
		// orders and the system lag from these lines (about 2 GB a month).
		p.log.InfoContext(ctx, "order handled", "message_id", r.MessageID, "pedido_id", r.PedidoID,
			"aggregation", o.Aggregation, "fate", o.Fate, "lateness", o.Lateness.String(),
			"window_start", o.Window.Start, "key", o.Key, "watermark", o.Watermark,
			"pending", o.Pending)
	}
}

// lastExpiry keeps an ExpireAt within the years a document store accepts.
var lastExpiry = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func dedupExpiry(now, windowGone time.Time) time.Time {
	t := later(now, windowGone)
	if t.After(lastExpiry.Add(-DedupRetention)) {
		return lastExpiry
	}
	return t.Add(DedupRetention)
}
