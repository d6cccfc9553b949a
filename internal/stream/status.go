package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// AggregationStatus is a read-only view of one aggregation's state, for
// people asking whether the real-time view is keeping up.
type AggregationStatus struct {
	Aggregation  string
	Watermark    time.Time     // W as the last tick wrote it; zero: minus infinity
	MaxEventTime time.Time     // M: newest event time of an accepted order seen by a tick
	LastAccepted time.Time     // processing time of the last accepted order seen by a tick
	Lag          time.Duration // now - W; 0 while W is at minus infinity
	// OpenWindows are the (window, key)s with state, oldest window first:
	// the orders a tick has folded in; later ones show after the next tick.
	// A window whose state cannot be read is in Failing instead.
	OpenWindows    []OpenWindow
	Outbox         int       // rows not yet in the warehouse (the sink failed)
	TickLeaseUntil time.Time // zero when no tick holds the lease
	// Failing are the windows the last ticks could not process and the
	// documents this status could not read.
	Failing []FailingWindow
}

// OpenWindow is one open (window, key) and its pane bookkeeping.
type OpenWindow struct {
	Start  time.Time
	End    time.Time
	Key    string
	Panes  int64               // panes emitted so far
	OnTime window.OnTimeStatus // whether its ON_TIME pane is still owed
}

// Status reads every aggregation's watermark, open windows and outbox by
// listing collections, without transactions: a snapshot per collection,
// good enough for a status page, that never contends with the order and
// tick transactions. now only computes the lag.
func (p *Processor) Status(ctx context.Context, now time.Time) ([]AggregationStatus, error) {
	now = now.UTC()
	ctl, ctlErr, err := p.statusControl(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AggregationStatus, 0, len(p.aggs))
	for _, a := range p.aggs {
		st, err := p.aggregationStatus(ctx, a, ctl, ctlErr, now)
		if err != nil {
			return nil, fmt.Errorf("status of aggregation %s: %w", a.spec.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// statusControl reads the control document by listing its collection (no
// transaction). ctl is nil when it does not exist yet; ctlErr is set when
// it cannot be read (another layout): every aggregation reports it.
func (p *Processor) statusControl(ctx context.Context) (ctl *controlDoc, ctlErr, err error) {
	coll := path.Dir(controlPath)
	docs, err := p.store.List(ctx, coll)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", coll, err)
	}
	for _, d := range docs {
		if d.Path != controlPath {
			continue
		}
		var c controlDoc
		if err := decodeDoc(d, &c); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return nil, nil, err
			}
			return nil, err, nil
		}
		return &c, nil, nil
	}
	return nil, nil, nil
}

// DeadLettersPending counts invalid messages' rows not yet in the warehouse.
func (p *Processor) DeadLettersPending(ctx context.Context) (int, error) {
	docs, err := p.store.List(ctx, deadOutbox)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", deadOutbox, err)
	}
	return len(docs), nil
}

func (p *Processor) aggregationStatus(ctx context.Context, a aggregation, ctl *controlDoc,
	ctlErr error, now time.Time) (AggregationStatus, error) {
	st := AggregationStatus{Aggregation: a.spec.Name}
	if ctlErr != nil {
		st.Failing = append(st.Failing, failingDoc(a, controlPath, ctlErr))
	}
	if ctl != nil {
		ws := ctl.Aggs[a.spec.Name].WatermarkState
		st.Watermark, st.MaxEventTime, st.LastAccepted = ws.Watermark, ws.MaxEventTime, ws.LastAccepted
	}
	coll := path.Dir(a.paths.fold)
	control, err := p.store.List(ctx, coll)
	if err != nil {
		return st, fmt.Errorf("list %s: %w", coll, err)
	}
	var fd *foldDoc
	for _, d := range control {
		switch d.Path {
		case a.paths.fold:
			var f foldDoc
			if err := decodeDoc(d, &f); err != nil {
				if !errors.Is(err, ErrUnreadableState) {
					return st, err
				}
				st.Failing = append(st.Failing, failingDoc(a, d.Path, err))
				continue
			}
			fd = &f
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
	st.Watermark, st.MaxEventTime, st.LastAccepted = st.Watermark.UTC(), st.MaxEventTime.UTC(), st.LastAccepted.UTC()
	if !st.Watermark.IsZero() {
		st.Lag = now.Sub(st.Watermark)
	}
	if err := p.windowStatus(ctx, a, fd, &st); err != nil {
		return st, err
	}
	st.Failing = dedupFailing(st.Failing)
	slices.SortFunc(st.OpenWindows, func(x, y OpenWindow) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.Key, y.Key))
	})
	if st.Outbox, err = p.outboxRows(ctx, a.paths.outbox); err != nil {
		return st, err
	}
	return st, nil
}

func (p *Processor) windowStatus(ctx context.Context, a aggregation, fd *foldDoc, st *AggregationStatus) error {
	if fd != nil {
		for _, e := range fd.Windows {
			if e.Error != "" {
				st.Failing = append(st.Failing, a.failingWindow(e))
			}
		}
	}
	// Listing the collection reads every part without the agenda.
	err := listStatus(ctx, p, a, a.paths.state, st, func(pd partDoc) {
		for k, ks := range pd.Keys {
			st.OpenWindows = append(st.OpenWindows, openWindow(pd.Start, pd.End, k, ks.State))
		}
	})
	if err != nil || !a.spec.Session() {
		return err
	}
	return listStatus(ctx, p, a, a.paths.sessions, st, func(sp sessionsPart) {
		sp.load()
		for k, ss := range sp.Keys {
			for _, x := range ss {
				st.OpenWindows = append(st.OpenWindows, openWindow(x.Start, x.End, k, x.State))
			}
		}
	})
}

// listStatus decodes every document of coll for each; one that cannot be
// read is reported in st.Failing.
func listStatus[T any](ctx context.Context, p *Processor, a aggregation, coll string, st *AggregationStatus,
	each func(T),
) error {
	docs, err := p.store.List(ctx, coll)
	if err != nil {
		return fmt.Errorf("list %s: %w", coll, err)
	}
	for _, d := range docs {
		var v T
		if err := decodeDoc(d, &v); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return err
			}
			st.Failing = append(st.Failing, failingDoc(a, d.Path, err))
			continue
		}
		each(v)
	}
	return nil
}

func openWindow(start, end time.Time, key string, s window.PaneState) OpenWindow {
	on := s.OnTime
	if on == "" {
		on = window.OnTimePending
	}
	return OpenWindow{Start: start.UTC(), End: end.UTC(), Key: key, Panes: s.NextIndex, OnTime: on}
}

// outboxRows counts a document that does not decode as one row, as the
// tick does.
func (p *Processor) outboxRows(ctx context.Context, outbox string) (int, error) {
	docs, err := p.store.List(ctx, outbox)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", outbox, err)
	}
	n := 0
	for _, d := range docs {
		es, err := decodeOutbox(d)
		if err != nil {
			n++
			continue
		}
		n += len(es)
	}
	return n, nil
}

// Watermark returns aggregation's W as the last tick wrote it: the zero time
// while W is at minus infinity (no order accepted yet). It satisfies the
// dashboard's WatermarkReader.
func (p *Processor) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	if _, ok := p.specs[aggregation]; !ok {
		return time.Time{}, fmt.Errorf("aggregation %q is not configured in this processor", aggregation)
	}
	return ReadWatermark(ctx, p.store, aggregation)
}

// aggregationName is what may name an aggregation's documents.
var aggregationName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

// ReadWatermark reads aggregation's W from store without a Processor (the
// local dashboard). Its transaction of one Get of the control document
// holds up a tick for no longer than that read, and never an order.
func ReadWatermark(ctx context.Context, store docstore.Store, aggregation string) (time.Time, error) {
	if !aggregationName.MatchString(aggregation) {
		return time.Time{}, fmt.Errorf("aggregation name %q: want letters, digits and '_'", aggregation)
	}
	var ctl controlDoc
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		ctl = controlDoc{}
		docs, err := tx.Get(controlPath)
		if err != nil {
			return err
		}
		return decodeDoc(docs[0], &ctl)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", controlPath, err)
	}
	return ctl.Aggs[aggregation].Watermark.UTC(), nil
}
