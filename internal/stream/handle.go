package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// Bounds on the identifiers that become document IDs (at most 1,500 bytes
// once escaped): an order beyond them is invalid rather than an error that
// Pub/Sub would redeliver forever.
const (
	maxPedidoIDBytes = 256
	maxKeyBytes      = 128
)

// Event times outside [minEventTime, maxEventTime) are invalid: windows,
// expiries and dedup TTLs near the ends of the years 0-9999 that RFC 3339
// allows would leave the range of JSON times, Firestore timestamps and
// BigQuery TIMESTAMPs, and fail forever instead of once.
var (
	minEventTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxEventTime = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Handle processes one push delivery. A nil error means the message's
// effect is durable (accepted, dropped as too late, or dead-lettered as
// invalid, or recognised as a duplicate of one of those): answer 2xx. An
// error is transient (the store failed): answer non-2xx so that Pub/Sub
// redelivers; the redelivery is deduplicated.
//
// A valid order is handled in each aggregation in turn, one transaction
// each. Its rows (a late correction pane, a too-late drop) are appended to
// the sink before returning; when the sink fails they stay in the outbox for
// the next tick and Handle still succeeds.
func (p *Processor) Handle(ctx context.Context, d order.Delivery, now time.Time) (Result, error) {
	now = now.UTC()
	m := d.Message
	res := Result{MessageID: m.ID()}
	o, err := order.Parse(m.Data, m.Attributes, p.isCountry)
	if err != nil {
		return p.handleInvalid(ctx, res, m, invalidReason(err), now)
	}
	res.PedidoID = o.PedidoID
	if o.EventTime.Before(minEventTime) || !o.EventTime.Before(maxEventTime) {
		return p.handleInvalid(ctx, res, m, fmt.Sprintf("invalid: %s %s is outside the years %d to %d",
			order.EventTimeAttribute, o.EventTime.Format(time.RFC3339Nano), minEventTime.Year(), maxEventTime.Year()-1), now)
	}
	if len(o.PedidoID) > maxPedidoIDBytes {
		return p.handleInvalid(ctx, res, m, fmt.Sprintf("invalid: pedido_id longer than %d bytes", maxPedidoIDBytes), now)
	}
	qs := make([]int64, len(o.Lineas))
	for i, l := range o.Lineas {
		qs[i] = l.Cantidad
	}
	ms, err := window.OrderMeasures(o.ImporteTotal, qs...)
	if err != nil {
		return p.handleInvalid(ctx, res, m, "invalid: "+err.Error(), now)
	}

	keys := make([]string, len(p.aggs))
	for i, a := range p.aggs {
		keys[i], _ = o.Field(a.spec.KeyField) // New checked the field exists
		if len(keys[i]) > maxKeyBytes {
			return p.handleInvalid(ctx, res, m, fmt.Sprintf("invalid: %s longer than %d bytes", a.spec.KeyField, maxKeyBytes), now)
		}
	}

	var written []pending
	for i, a := range p.aggs {
		wo := window.Order{ID: o.PedidoID, Key: keys[i], EventTime: o.EventTime, Measures: ms}
		out, rows, err := p.handleOrder(ctx, a, wo, m, now)
		if errors.Is(err, window.ErrOverflow) {
			// The window's totals would leave NUMERIC's range: no retry can
			// ever succeed, so the message is dead-lettered.
			res.Aggregations = nil
			return p.handleInvalid(ctx, res, m, fmt.Sprintf("invalid: aggregation %s: %v", a.spec.Name, err), now)
		}
		if err != nil {
			return res, fmt.Errorf("handle order %s (message %s) in aggregation %s: %w", o.PedidoID, m.ID(), a.spec.Name, err)
		}
		res.Aggregations = append(res.Aggregations, out)
		written = append(written, rows...)
	}
	if len(written) > 0 {
		if _, err := p.flush(ctx, written); err != nil {
			// The rows are durable in the outbox: the next tick appends them.
			p.log.WarnContext(ctx, "outbox flush failed; the next tick retries",
				"message_id", m.ID(), "pedido_id", o.PedidoID, "error", err.Error())
			for i := range res.Aggregations {
				res.Aggregations[i].Pending = len(res.Aggregations[i].Panes)
				if res.Aggregations[i].Fate == TooLate {
					res.Aggregations[i].Pending = 1
				}
			}
		}
	}
	p.logResult(ctx, res)
	return res, nil
}

// errNoCell stops an order transaction that would create its cell.
var errNoCell = errors.New("cell does not exist yet")

// handleOrder runs the order transaction of one aggregation and returns the
// outbox rows it wrote.
//
// The first order of a (window, key) creates its cell in a transaction of
// its own before the order transaction. Under a burst into a new window
// (the hot key at the top of the hour) every order finds the cell missing;
// creating it inside each order transaction would make all of them write
// one document and abort each other, while the small creating transactions
// settle after one commit and leave the orders contending only per shard.
func (p *Processor) handleOrder(ctx context.Context, a aggregation, o window.Order, m order.Message, now time.Time) (Outcome, []pending, error) {
	out, written, err := p.orderTx(ctx, a, o, m, now, false)
	if !errors.Is(err, errNoCell) {
		return out, written, err
	}
	if err := p.ensureCell(ctx, a, a.spec.WindowOf(o.EventTime), o.Key); err != nil {
		return Outcome{}, nil, err
	}
	// A tick may expire the new cell before this runs: then the order
	// transaction creates it (or, more likely, finds the order too late).
	return p.orderTx(ctx, a, o, m, now, true)
}

// ensureCell creates the cell of (w, key) unless it exists. A cell whose
// order then turns out too late stays empty: it emits no pane and the tick
// deletes it when the window expires.
func (p *Processor) ensureCell(ctx context.Context, a aggregation, w window.Window, key string) error {
	path := a.paths.cell(window.WindowKey{Window: w, Key: key})
	return p.cells.do(path, func() error {
		return p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
			docs, err := tx.Get(path)
			if err != nil || docs[0].Exists {
				return err
			}
			return set(tx, path, cellDoc{WindowStart: w.Start, WindowEnd: w.End, Key: key, Shards: a.spec.Shards}, time.Time{})
		})
	})
}

func (p *Processor) orderTx(ctx context.Context, a aggregation, o window.Order, m order.Message, now time.Time, mayCreate bool) (Outcome, []pending, error) {
	s := a.spec
	w := s.WindowOf(o.EventTime)
	wk := window.WindowKey{Window: w, Key: o.Key}
	cellPath := a.paths.cell(wk)
	orderPath := a.paths.order(o.ID)

	var out Outcome
	var written []pending
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		out = Outcome{Aggregation: s.Name, Window: w, Key: o.Key}
		written = nil
		docs, err := tx.Get(a.paths.watermark, orderPath, cellPath)
		if err != nil {
			return err
		}
		// Dedup first: a redelivery after the window closed is a duplicate,
		// not a too-late order.
		if docs[1].Exists {
			var rec orderDoc
			if err := decodeDoc(docs[1], &rec); err != nil {
				return err
			}
			out.Fate, out.Recorded = Duplicate, rec.Fate
			return nil
		}
		var ws window.WatermarkState
		if err := decodeDoc(docs[0], &ws); err != nil {
			return err
		}
		wm := ws.Watermark
		out.Watermark, out.Lateness = wm, s.Classify(w, wm)
		rec := orderDoc{MessageID: m.ID(), WindowStart: w.Start, Key: o.Key, Watermark: wm, ReceivedAt: now}

		if out.Lateness == window.TooLate {
			out.Fate, rec.Fate = TooLate, TooLate
			e := p.rows.discardEntry(tooLateRowID(s.Name, o.ID), discard{
				PedidoID: o.ID, Aggregation: s.Name, Reason: ReasonTooLate,
				EventTime: o.EventTime.UTC(), WindowStart: w.Start, Watermark: wm, ReceivedAt: now,
				MessageID: m.ID(), Raw: rawMessage(m.Data, m.Attributes),
			})
			if err := set(tx, orderPath, rec, now.Add(DedupRetention)); err != nil {
				return err
			}
			pe, err := p.writeEntry(tx, a.paths.outbox, e)
			written = append(written, pe)
			return err
		}

		cell := cellDoc{WindowStart: w.Start, WindowEnd: w.End, Key: o.Key, Shards: s.Shards}
		if !docs[2].Exists && !mayCreate {
			return errNoCell
		}
		if docs[2].Exists {
			if err := decodeDoc(docs[2], &cell); err != nil {
				return err
			}
			if cell.Shards < 1 || cell.Shards > window.MaxShards {
				return fmt.Errorf("%s: shard count %d out of range", cellPath, cell.Shards)
			}
		}
		cs := s
		cs.Shards = cell.Shards // the cell's count, fixed when it was created
		n := cs.ShardOf(o.ID)
		emitNow := out.Lateness == window.Late && s.LateDelay == 0
		shardPaths := []string{shardPath(cellPath, n)}
		i := 0
		if emitNow {
			shardPaths = make([]string, cell.Shards)
			for j := range shardPaths {
				shardPaths[j] = shardPath(cellPath, j)
			}
			i = n
		}
		sdocs, err := tx.Get(shardPaths...)
		if err != nil {
			return err
		}
		shards := make([]window.Shard, len(sdocs))
		for j, d := range sdocs {
			if err := decodeDoc(d, &shards[j]); err != nil {
				return err
			}
		}
		if shards[i], err = s.Accept(shards[i], cell.State, o, wm, now); err != nil {
			return err
		}
		state := cell.State
		var pane *window.Pane
		if emitNow {
			c, err := window.Combine(cell.State, shards)
			if err != nil {
				return fmt.Errorf("%s: %w", cellPath, err)
			}
			oc, err := s.OnLateOrder(wk, cell.State, c, wm, now)
			if err != nil {
				return err
			}
			state, pane = oc.State, oc.Pane
		}

		out.Fate, rec.Fate = Accepted, Accepted
		expire := dedupExpiry(now, s.ExpiryOf(w).Add(s.OutOfOrderness))
		if err := set(tx, shardPaths[i], shards[i], time.Time{}); err != nil {
			return err
		}
		if err := set(tx, orderPath, rec, expire); err != nil {
			return err
		}
		if !docs[2].Exists || state != cell.State {
			cell.State = state
			if err := set(tx, cellPath, cell, time.Time{}); err != nil {
				return err
			}
		}
		if pane != nil {
			out.Panes = []window.Pane{*pane}
			pe, err := p.writeEntry(tx, a.paths.outbox, p.rows.paneEntry(*pane))
			written = append(written, pe)
			return err
		}
		return nil
	})
	if err != nil {
		return Outcome{}, nil, err
	}
	return out, written, nil
}

func (p *Processor) logResult(ctx context.Context, r Result) {
	if r.Invalid != "" {
		p.log.InfoContext(ctx, "message dead-lettered", "message_id", r.MessageID, "pedido_id", r.PedidoID,
			"fate", Invalid, "reason", r.Invalid, "duplicate", r.Duplicate)
		return
	}
	for _, o := range r.Aggregations {
		level := slog.LevelDebug
		if o.Fate == TooLate || len(o.Panes) > 0 || o.Pending > 0 {
			level = slog.LevelInfo
		}
		if !p.log.Enabled(ctx, level) {
			continue
		}
		p.log.Log(ctx, level, "order handled", "message_id", r.MessageID, "pedido_id", r.PedidoID,
			"aggregation", o.Aggregation, "fate", o.Fate, "lateness", o.Lateness.String(),
			"window_start", o.Window.Start, "key", o.Key, "watermark", o.Watermark,
			"panes", len(o.Panes), "pending", o.Pending)
	}
}

// lastExpiry keeps an ExpireAt within the years a document store accepts:
// an event time in year 9999 (a broken clock) must not make the order's
// transaction fail forever.
var lastExpiry = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// dedupExpiry is when an accepted order's dedup record may go: Pub/Sub's
// retention after the later of now and the earliest processing time at
// which its window can expire (end + L + D, since W <= now - D).
func dedupExpiry(now, windowGone time.Time) time.Time {
	t := now
	if windowGone.After(t) {
		t = windowGone
	}
	if t.After(lastExpiry.Add(-DedupRetention)) {
		return lastExpiry
	}
	return t.Add(DedupRetention)
}
