package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// cellWorkers bounds the per-cell transactions of a tick that run at once:
// enough to hide a remote store's latency, few enough not to crowd out the
// order transactions.
const cellWorkers = 8

// Tick runs the watermark timer at processing time now, for every
// aggregation: it appends rows left in the outboxes, advances W, emits the
// EARLY, ON_TIME, batched LATE and expiry panes, deletes expired state and
// appends the new panes. Its work is proportional to the open (window, key)s
// and the rows waiting in the outboxes, never to history.
//
// Each aggregation is guarded by a lease; when another live tick holds it
// that aggregation is skipped (AggregationTick.Busy), and when all are, Tick
// returns ErrTickBusy. Running Tick again at the same now changes nothing.
// An error means some work is left for the next tick; nothing is lost.
func (p *Processor) Tick(ctx context.Context, now time.Time) (TickResult, error) {
	now = now.UTC()
	res := TickResult{Now: now}
	var errs []error
	n, left, err := p.flushOutbox(ctx, deadOutbox)
	res.DeadLetters, res.DeadLettersPending = n, left
	if err != nil {
		errs = append(errs, fmt.Errorf("flush dead letters: %w", err))
	}
	busy := 0
	for _, a := range p.aggs {
		at, err := p.tickAggregation(ctx, a, now)
		res.Aggregations = append(res.Aggregations, at)
		if at.Busy {
			busy++
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tick aggregation %s at %s: %w", a.spec.Name, now.Format(time.RFC3339), err))
		}
		p.logTick(ctx, at, err)
	}
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	if busy == len(p.aggs) {
		return res, ErrTickBusy
	}
	return res, nil
}

func (p *Processor) tickAggregation(ctx context.Context, a aggregation, now time.Time) (at AggregationTick, err error) {
	at.Aggregation = a.spec.Name
	holder, err := newHolder()
	if err != nil {
		return at, err
	}
	busy, err := p.acquire(ctx, a, holder, now)
	if err != nil {
		return at, fmt.Errorf("acquire lease: %w", err)
	}
	if busy {
		at.Busy = true
		return at, nil
	}
	defer func() {
		// Released even when the caller gave up, so the next tick need not
		// wait for the lease to run out.
		if rerr := p.release(context.WithoutCancel(ctx), a, holder); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release lease: %w", rerr))
		}
	}()

	var errs []error
	// Leftovers first: a pane waiting since a failed append goes out before
	// any later pane of its window.
	n, _, err := p.flushOutbox(ctx, a.paths.outbox)
	at.Flushed += n
	if err != nil {
		// The state work below does not need the sink; its panes wait in
		// the outbox with the others.
		errs = append(errs, fmt.Errorf("flush outbox: %w", err))
	}

	listed, err := p.store.List(ctx, a.paths.windows)
	if err != nil {
		return at, errors.Join(append(errs, fmt.Errorf("list %s: %w", a.paths.windows, err))...)
	}
	cellPaths := make([]string, len(listed))
	for i, d := range listed {
		cellPaths[i] = d.Path
	}
	at.OpenWindows = len(cellPaths)

	before, after, snaps, err := p.advance(ctx, a, cellPaths, now)
	if err != nil {
		return at, errors.Join(append(errs, fmt.Errorf("advance watermark: %w", err))...)
	}
	at.WatermarkBefore, at.Watermark = before.Watermark, after.Watermark
	if !after.Watermark.IsZero() {
		at.Lag = now.Sub(after.Watermark)
	}

	panes, expired, err := p.tickCells(ctx, a, snaps, after.Watermark, now)
	at.Panes, at.Expired = panes, expired
	if err != nil {
		errs = append(errs, err)
	}

	n, left, err := p.flushOutbox(ctx, a.paths.outbox)
	at.Flushed += n
	at.Pending = left
	if err != nil {
		errs = append(errs, fmt.Errorf("flush outbox: %w", err))
	}
	return at, errors.Join(errs...)
}

// cellSnap is an open cell as the watermark transaction read it.
type cellSnap struct {
	path    string
	cell    cellDoc
	content window.Content
}

// advance is the watermark transaction: it reads W and every listed cell
// with its shards, folds the cells' newest event and acceptance times in,
// and writes the advanced W (only if anything changed).
func (p *Processor) advance(ctx context.Context, a aggregation, cellPaths []string, now time.Time) (before, after window.WatermarkState, snaps []cellSnap, err error) {
	err = p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		before, after, snaps = window.WatermarkState{}, window.WatermarkState{}, nil
		docs, err := tx.Get(append([]string{a.paths.watermark}, cellPaths...)...)
		if err != nil {
			return err
		}
		if err := decodeDoc(docs[0], &before); err != nil {
			return err
		}
		var shardPaths []string
		for _, d := range docs[1:] {
			if !d.Exists {
				continue // expired since the listing
			}
			s := cellSnap{path: d.Path}
			if err := decodeDoc(d, &s.cell); err != nil {
				return err
			}
			if s.cell.Shards < 1 || s.cell.Shards > window.MaxShards {
				return fmt.Errorf("%s: shard count %d out of range", d.Path, s.cell.Shards)
			}
			for n := range s.cell.Shards {
				shardPaths = append(shardPaths, shardPath(d.Path, n))
			}
			snaps = append(snaps, s)
		}
		var sdocs []docstore.Doc
		if len(shardPaths) > 0 {
			if sdocs, err = tx.Get(shardPaths...); err != nil {
				return err
			}
		}
		after = before
		for i := range snaps {
			s := &snaps[i]
			shards, rest, err := decodeShards(sdocs, s.cell.Shards)
			if err != nil {
				return err
			}
			sdocs = rest
			if s.content, err = window.Combine(s.cell.State, shards); err != nil {
				return fmt.Errorf("%s: %w", s.path, err)
			}
			after = after.Observe(s.content.MaxEventTime, s.content.LastAccepted)
		}
		after = a.spec.AdvanceWatermark(after, now)
		if sameWatermark(before, after) {
			return nil
		}
		return set(tx, a.paths.watermark, after, time.Time{})
	})
	return before, after, snaps, err
}

// tickCells runs the trigger of every cell the snapshot says may change,
// each in its own transaction. A cell with nothing to do at this tick is
// not written, so re-running a tick is read-only.
func (p *Processor) tickCells(ctx context.Context, a aggregation, snaps []cellSnap, wm, now time.Time) ([]window.Pane, int, error) {
	var (
		mu      sync.Mutex
		panes   []window.Pane
		expired int
		errs    []error
		wg      sync.WaitGroup
		sem     = make(chan struct{}, cellWorkers)
	)
	for _, s := range snaps {
		out, err := a.spec.OnTick(s.cell.windowKey(), s.cell.State, s.content, wm, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.path, err))
			continue
		}
		if out.Pane == nil && !out.Expired && out.State == s.cell.State {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pane, gone, err := p.tickCell(ctx, a, s.path, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.path, err))
				return
			}
			if pane != nil {
				panes = append(panes, *pane)
			}
			if gone {
				expired++
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(panes, func(x, y window.Pane) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Index, y.Index))
	})
	return panes, expired, errors.Join(errs...)
}

// tickCell is one cell's tick transaction. It reads W again rather than
// trusting the tick's: a concurrent, later tick may have moved it, and a
// pane must never carry a watermark older than one its cell already saw.
func (p *Processor) tickCell(ctx context.Context, a aggregation, path string, now time.Time) (pane *window.Pane, expired bool, err error) {
	err = p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		pane, expired = nil, false
		docs, err := tx.Get(a.paths.watermark, path)
		if err != nil {
			return err
		}
		if !docs[1].Exists {
			return nil // expired by a concurrent tick
		}
		var ws window.WatermarkState
		var cell cellDoc
		if err := decodeDoc(docs[0], &ws); err != nil {
			return err
		}
		if err := decodeDoc(docs[1], &cell); err != nil {
			return err
		}
		if cell.Shards < 1 || cell.Shards > window.MaxShards {
			return fmt.Errorf("shard count %d out of range", cell.Shards)
		}
		shardPaths := make([]string, cell.Shards)
		for n := range shardPaths {
			shardPaths[n] = shardPath(path, n)
		}
		sdocs, err := tx.Get(shardPaths...)
		if err != nil {
			return err
		}
		shards, _, err := decodeShards(sdocs, cell.Shards)
		if err != nil {
			return err
		}
		c, err := window.Combine(cell.State, shards)
		if err != nil {
			return err
		}
		out, err := a.spec.OnTick(cell.windowKey(), cell.State, c, ws.Watermark, now)
		if err != nil {
			return err
		}
		if out.Pane != nil {
			if _, err := p.writeEntry(tx, a.paths.outbox, p.rows.paneEntry(*out.Pane)); err != nil {
				return err
			}
			pane = out.Pane
		}
		if out.Expired {
			expired = true
			for _, sp := range shardPaths {
				if err := tx.Delete(sp); err != nil {
					return err
				}
			}
			return tx.Delete(path)
		}
		if out.State == cell.State {
			return nil
		}
		cell.State = out.State
		return set(tx, path, cell, time.Time{})
	})
	return pane, expired, err
}

// decodeShards decodes the first n documents of docs and returns the rest.
func decodeShards(docs []docstore.Doc, n int) ([]window.Shard, []docstore.Doc, error) {
	if len(docs) < n {
		return nil, nil, fmt.Errorf("read %d shard documents, want %d", len(docs), n)
	}
	shards := make([]window.Shard, n)
	for i := range n {
		if err := decodeDoc(docs[i], &shards[i]); err != nil {
			return nil, nil, err
		}
	}
	return shards, docs[n:], nil
}

func sameWatermark(a, b window.WatermarkState) bool {
	return a.Watermark.Equal(b.Watermark) && a.MaxEventTime.Equal(b.MaxEventTime) && a.LastAccepted.Equal(b.LastAccepted)
}

func (p *Processor) logTick(ctx context.Context, at AggregationTick, err error) {
	attrs := []any{"aggregation", at.Aggregation, "busy", at.Busy,
		"watermark_before", at.WatermarkBefore, "watermark", at.Watermark, "lag_seconds", at.Lag.Seconds(),
		"open_windows", at.OpenWindows, "panes", len(at.Panes), "expired", at.Expired,
		"flushed", at.Flushed, "pending", at.Pending}
	if err != nil {
		p.log.ErrorContext(ctx, "tick incomplete; the next tick continues", append(attrs, "error", err.Error())...)
		return
	}
	p.log.InfoContext(ctx, "tick", attrs...)
}
