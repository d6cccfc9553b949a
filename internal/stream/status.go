package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// AggregationStatus is a read-only view of one aggregation's state, for
// people asking whether the real-time view is keeping up.
type AggregationStatus struct {
	Aggregation string
	// Watermark is W as the last tick wrote it; zero while no order has
	// been accepted (W at minus infinity).
	Watermark    time.Time
	MaxEventTime time.Time // M: newest event time of an accepted order seen by a tick
	LastAccepted time.Time // processing time of the last accepted order seen by a tick
	// Lag is now - W; 0 while W is at minus infinity.
	Lag time.Duration
	// OpenWindows are the (window, key)s with state, oldest window first.
	OpenWindows []OpenWindow
	// Outbox counts panes and too-late rows not yet in the warehouse (the
	// sink failed; the next tick appends them).
	Outbox int
	// TickLeaseUntil is when the current tick's lease ends; zero when no
	// tick holds it.
	TickLeaseUntil time.Time
	// Failing are the cells the last ticks could not process, with their
	// error (as the agenda recorded them), and the documents this status
	// could not read; the other cells are open as usual.
	Failing []FailingCell
}

// OpenWindow is one open (window, key) and its pane bookkeeping.
type OpenWindow struct {
	Start  time.Time
	End    time.Time
	Key    string
	Panes  int64               // panes emitted so far
	OnTime window.OnTimeStatus // whether its ON_TIME pane is still owed
}

// Status reads every aggregation's watermark, open windows and outbox
// without writing anything and without transactions: it is a snapshot per
// collection, good enough for a status page, and it never contends with
// the order and tick transactions. now only computes the lag.
func (p *Processor) Status(ctx context.Context, now time.Time) ([]AggregationStatus, error) {
	out := make([]AggregationStatus, 0, len(p.aggs))
	for _, a := range p.aggs {
		st, err := p.aggregationStatus(ctx, a, now.UTC())
		if err != nil {
			return nil, fmt.Errorf("status of aggregation %s: %w", a.spec.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// DeadLettersPending counts invalid messages' rows not yet in the warehouse.
func (p *Processor) DeadLettersPending(ctx context.Context) (int, error) {
	docs, err := p.store.List(ctx, deadOutbox)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", deadOutbox, err)
	}
	return len(docs), nil
}

func (p *Processor) aggregationStatus(ctx context.Context, a aggregation, now time.Time) (AggregationStatus, error) {
	st := AggregationStatus{Aggregation: a.spec.Name}
	control, err := p.store.List(ctx, collectionOf(a.paths.watermark))
	if err != nil {
		return st, fmt.Errorf("list control documents: %w", err)
	}
	for _, d := range control {
		switch d.Path {
		case a.paths.watermark:
			var ws window.WatermarkState
			if err := decodeDoc(d, &ws); err != nil {
				if !errors.Is(err, ErrUnreadableState) {
					return st, err
				}
				st.Failing = append(st.Failing, failingDoc(a, d.Path, err))
				continue
			}
			st.Watermark, st.MaxEventTime, st.LastAccepted = ws.Watermark, ws.MaxEventTime, ws.LastAccepted
		case a.paths.lease:
			var l leaseDoc
			if err := decodeDoc(d, &l); err != nil {
				return st, err
			}
			if now.Before(l.Until) {
				st.TickLeaseUntil = l.Until
			}
		}
	}
	if !st.Watermark.IsZero() {
		st.Lag = now.Sub(st.Watermark)
	}
	cells, err := p.store.List(ctx, a.paths.windows)
	if err != nil {
		return st, fmt.Errorf("list %s: %w", a.paths.windows, err)
	}
	for _, d := range cells {
		var c cellDoc
		if err := decodeDoc(d, &c); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return st, err
			}
			st.Failing = append(st.Failing, failingDoc(a, d.Path, err))
			continue
		}
		on := c.State.OnTime
		if on == "" {
			on = window.OnTimePending
		}
		st.OpenWindows = append(st.OpenWindows, OpenWindow{
			Start: c.WindowStart.UTC(), End: c.WindowEnd.UTC(), Key: c.Key,
			Panes: c.State.NextIndex, OnTime: on,
		})
	}
	// Cells whose orders no tick has folded in yet are only in the agenda.
	agenda, err := p.store.List(ctx, a.paths.agenda)
	if err != nil {
		return st, fmt.Errorf("list %s: %w", a.paths.agenda, err)
	}
	known := map[window.WindowKey]bool{}
	for _, w := range st.OpenWindows {
		known[window.WindowKey{Window: window.Window{Start: w.Start, End: w.End}, Key: w.Key}] = true
	}
	for _, d := range agenda {
		var ag agendaDoc
		if err := decodeDoc(d, &ag); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return st, err
			}
			st.Failing = append(st.Failing, failingDoc(a, d.Path, err))
			continue
		}
		for _, c := range ag.Cells {
			wk := window.WindowKey{Window: ag.window(), Key: c.Key}
			if c.Error != "" {
				st.Failing = append(st.Failing, failingOf(a, wk, errors.New(c.Error), c.FailingSince))
			}
			if !known[wk] {
				st.OpenWindows = append(st.OpenWindows, OpenWindow{Start: wk.Window.Start, End: wk.Window.End, Key: c.Key, OnTime: window.OnTimePending})
			}
		}
	}
	st.Failing = dedupFailing(st.Failing)
	slices.SortFunc(st.OpenWindows, func(x, y OpenWindow) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.Key, y.Key))
	})
	outbox, err := p.store.List(ctx, a.paths.outbox)
	if err != nil {
		return st, fmt.Errorf("list %s: %w", a.paths.outbox, err)
	}
	st.Outbox = len(outbox)
	return st, nil
}

// collectionOf is the collection that holds the document at path.
func collectionOf(path string) string {
	return path[:max(strings.LastIndexByte(path, '/'), 0)]
}

// Watermark returns aggregation's W as the last tick wrote it: the zero time
// while W is at minus infinity (no order accepted yet). It satisfies the
// dashboard's WatermarkReader.
func (p *Processor) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	for _, a := range p.aggs {
		if a.spec.Name == aggregation {
			return ReadWatermark(ctx, p.store, aggregation)
		}
	}
	return time.Time{}, fmt.Errorf("aggregation %q is not configured in this processor", aggregation)
}

// aggregationName is what may name an aggregation's documents.
var aggregationName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

// ReadWatermark reads aggregation's W from store without a Processor, for a
// reader that has only the store (the local dashboard). It reads one
// document in a transaction of one Get, so it holds up a tick for no longer
// than that read, and never an order.
func ReadWatermark(ctx context.Context, store docstore.Store, aggregation string) (time.Time, error) {
	if !aggregationName.MatchString(aggregation) {
		return time.Time{}, fmt.Errorf("aggregation name %q: want letters, digits and '_'", aggregation)
	}
	path := pathsOf(aggregation).watermark
	var ws window.WatermarkState
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		ws = window.WatermarkState{}
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		return decodeDoc(docs[0], &ws)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ws.Watermark.UTC(), nil
}
