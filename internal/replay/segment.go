package replay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// segment is one bounded stream: a processor over its own temporary store,
// fed by workers, closed by one final tick.
type segment struct {
	dir    string
	store  *boltstore.Store
	proc   *stream.Processor
	specs  []window.Spec
	handle time.Time // processing time of every Handle

	ctx    context.Context
	cancel context.CancelFunc
	jobs   []chan order.Delivery
	wg     sync.WaitGroup
	closed bool

	maxEvent time.Time // only the feeding goroutine touches it

	mu  sync.Mutex
	res segmentResult
	err error
}

// segmentResult is what a segment adds to the Report.
type segmentResult struct {
	accepted, duplicates int64
	invalidCount         int64
	invalid              []Sample
	windows              int64
	maxEvent             time.Time
	watermark, emittedAt time.Time
}

func openSegment(ctx context.Context, g *guard, opts Options, handle time.Time) (*segment, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "alpipe-replay-")
	if err != nil {
		return nil, fmt.Errorf("replay: state directory: %w", err)
	}
	store, err := boltstore.Open(filepath.Join(dir, "state.bolt"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("replay: %w", err)
	}
	proc, err := stream.New(store, g, opts.Specs, opts.IsCountry, opts.Log)
	if err != nil {
		_ = store.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("replay: %w", err)
	}
	s := &segment{dir: dir, store: store, proc: proc, specs: opts.Specs, handle: handle}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.jobs = make([]chan order.Delivery, opts.Workers)
	for i := range s.jobs {
		s.jobs[i] = make(chan order.Delivery, 64)
		s.wg.Add(1)
		go s.work(s.jobs[i])
	}
	return s, nil
}

// closable reports whether an order at event time t may start a new
// segment: in every aggregation its window is not the running segment's
// newest (the Cut promises no later order goes back further).
func (s *segment) closable(t time.Time) bool {
	if s.maxEvent.IsZero() {
		return false
	}
	for _, sp := range s.specs {
		if sp.WindowOf(t) == sp.WindowOf(s.maxEvent) {
			return false
		}
	}
	return true
}

// feed hands a valid order to its worker. Every message of one pedido_id
// goes to the same worker, in input order, so which duplicate counts does
// not depend on scheduling.
func (s *segment) feed(ctx context.Context, m Message, o order.Order) error {
	if o.EventTime.After(s.maxEvent) {
		s.maxEvent = o.EventTime
	}
	d := order.Delivery{Message: order.Message{Data: m.Data, Attributes: m.Attributes, MessageID: m.ID, PublishTime: s.handle}}
	h := fnv.New32a()
	h.Write([]byte(o.PedidoID))
	select {
	case s.jobs[h.Sum32()%uint32(len(s.jobs))] <- d:
		return nil
	case <-s.ctx.Done():
		return s.failure(ctx)
	}
}

func (s *segment) work(jobs <-chan order.Delivery) {
	defer s.wg.Done()
	for d := range jobs {
		if s.ctx.Err() != nil {
			continue // drain: the segment failed
		}
		res, err := s.proc.Handle(s.ctx, d, s.handle)
		s.mu.Lock()
		switch {
		case err != nil:
			s.fail(fmt.Errorf("handle %s: %w", d.Message.ID(), err))
		case res.Invalid != "":
			// Valid JSON the processor still refuses: an id too long, totals
			// beyond NUMERIC.
			s.res.invalidCount++
			if len(s.res.invalid) < maxSamples {
				s.res.invalid = append(s.res.invalid, Sample{ID: d.Message.ID(), Reason: res.Invalid})
			}
		case res.Fate() == stream.Accepted:
			s.res.accepted++
		case res.Fate() == stream.Duplicate:
			s.res.duplicates++
		default:
			s.fail(fmt.Errorf("handle %s: fate %s in a bounded replay, where no watermark has moved yet", d.Message.ID(), res.Fate()))
		}
		s.mu.Unlock()
	}
}

// fail records the first error and stops the segment; s.mu is held.
func (s *segment) fail(err error) {
	if s.err == nil {
		s.err = err
		s.cancel()
	}
}

func (s *segment) failure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("replay: %w", s.err)
	}
	return fmt.Errorf("replay: %w", ctx.Err())
}

func (s *segment) drain() {
	if s.closed {
		return
	}
	s.closed = true
	for _, c := range s.jobs {
		close(c)
	}
	s.wg.Wait()
}

// close waits for the handled orders, runs the final tick and removes the
// segment's state. start is the replay's start: the tick runs at the
// later of start and the first time the newest window's lateness is over.
func (s *segment) close(ctx context.Context, start time.Time) (segmentResult, error) {
	s.drain()
	res, err := s.finalTick(ctx, start)
	return res, errors.Join(err, s.abort())
}

func (s *segment) finalTick(ctx context.Context, start time.Time) (segmentResult, error) {
	s.mu.Lock()
	res, err := s.res, s.err
	s.mu.Unlock()
	res.maxEvent = s.maxEvent
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	if s.maxEvent.IsZero() {
		return res, nil
	}
	end := start
	for _, sp := range s.specs {
		// W = now - D once the source is idle, and W >= end + L expires
		// the window: the end of time for this input.
		if t := sp.WindowOf(s.maxEvent).End.Add(sp.AllowedLateness + sp.OutOfOrderness); t.After(end) {
			end = t
		}
	}
	tr, err := s.proc.Tick(ctx, end)
	if err != nil {
		return res, fmt.Errorf("replay: final tick at %s: %w", end.Format(time.RFC3339), err)
	}
	for _, at := range tr.Aggregations {
		switch {
		case at.Busy:
			return res, fmt.Errorf("replay: final tick of %s found its lease taken", at.Aggregation)
		case at.Pending > 0:
			return res, fmt.Errorf("replay: %d rows of %s were not written; run the replay again", at.Pending, at.Aggregation)
		case len(at.Panes) != at.Visited || at.Expired != at.Visited:
			// No tick ran before this one, so it folds every order of the
			// segment: each (window, key) it visits must emit its one
			// pane and close.
			return res, fmt.Errorf("replay: the final tick of %s closed %d and emitted %d panes for %d (window, key)s, want all",
				at.Aggregation, at.Expired, len(at.Panes), at.Visited)
		}
		for _, p := range at.Panes {
			if p.Timing != window.TimingOnTime || p.Index != 0 {
				return res, fmt.Errorf("replay: pane %s is %s, want the one ON_TIME pane", p.ID(), p.Timing)
			}
		}
		res.windows += int64(len(at.Panes))
		res.watermark, res.emittedAt = at.Watermark, end
	}
	return res, nil
}

// abort stops the workers and deletes the segment's state.
func (s *segment) abort() error {
	s.cancel()
	s.drain()
	err := s.store.Close()
	if rerr := os.RemoveAll(s.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("replay: remove segment state %s: %w", s.dir, err)
	}
	return nil
}
