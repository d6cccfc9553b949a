package stream

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// Tick runs the watermark timer at processing time now, for every
// aggregation (see the package comment). An aggregation whose lease another
// live tick holds is skipped (AggregationTick.Busy); when all are, Tick
// returns ErrTickBusy. Running Tick again at the same now changes nothing
// but the generation. An error means some work is left for the next tick;
// nothing is lost.
func (p *Processor) Tick(ctx context.Context, now time.Time) (res TickResult, tickErr error) {
	now = now.UTC()
	res = TickResult{Now: now}
	var errs []error
	if err := p.ensureControl(ctx); err != nil {
		return res, err
	}
	n, left, err := p.flushOutbox(ctx, deadOutbox)
	res.DeadLetters, res.DeadLettersPending = n, left
	if err != nil {
		errs = append(errs, fmt.Errorf("flush dead letters: %w", err))
	}
	res.Aggregations = make([]AggregationTick, len(p.aggs))
	// An aggregation whose lease could not be acquired is not live, and its
	// error must still fail the tick.
	ticks := make([]*aggTick, len(p.aggs))
	for i, a := range p.aggs {
		res.Aggregations[i].Aggregation = a.spec.Name
		ticks[i] = &aggTick{a: a, at: &res.Aggregations[i]}
	}
	each(ticks, func(t *aggTick) {
		holder := rand.Text()
		busy, err := p.acquire(ctx, t.a, holder, now)
		t.at.Busy = busy && err == nil
		if err != nil {
			t.err = fmt.Errorf("acquire lease: %w", err)
		} else if !busy {
			t.holder = holder
		}
	})
	live := slices.DeleteFunc(slices.Clone(ticks), func(t *aggTick) bool { return t.holder == "" })
	defer func() {
		each(live, func(t *aggTick) {
			// Released even when the caller gave up, so the next tick need
			// not wait for the lease to run out.
			if rerr := p.release(context.WithoutCancel(ctx), t.a, t.holder); rerr != nil {
				t.err = errors.Join(t.err, fmt.Errorf("release lease: %w", rerr))
			}
		})
		busy := 0
		for i, a := range p.aggs {
			at := &res.Aggregations[i]
			if at.Busy {
				busy++
			}
			err := ticks[i].err
			sortFailing(at.Failing)
			at.FailingCells = len(at.Failing)
			at.Failing = at.Failing[:min(len(at.Failing), MaxReportedFailing)]
			if err != nil {
				errs = append(errs, fmt.Errorf("tick aggregation %s at %s: %w", a.spec.Name, now.Format(time.RFC3339), err))
			}
			p.logTick(ctx, *at, err)
		}
		tickErr = errors.Join(errs...)
		if tickErr == nil && busy == len(p.aggs) {
			tickErr = ErrTickBusy
		}
	}()
	if err := p.tickLive(ctx, live, now); err != nil {
		errs = append(errs, err)
	}
	return res, nil
}

type aggTick struct {
	a      aggregation
	at     *AggregationTick
	holder string
	fd     foldDoc
	err    error
	// catchUp: more than maxFoldGens generations behind, this tick only
	// adds the next maxFoldGens at the W it has, without advance or
	// triggers, so that no transaction grows with the outage.
	catchUp bool
	skip    bool // its records cannot be read: no advance, no fold this tick
	read    bool // fd was read
}

// each runs f for every aggregation at once: f touches documents of that
// aggregation alone (or only reads shared ones).
func each(ts []*aggTick, f func(*aggTick)) {
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() { f(t) })
	}
	wg.Wait()
}

// maxFoldGens (about an hour of ticks) bounds what one fold rewrites.
const maxFoldGens = 60

// tickLive runs the tick of the aggregations whose lease it holds, in the
// four steps docs/stream.md ("A tick") lists.
func (p *Processor) tickLive(ctx context.Context, live []*aggTick, now time.Time) error {
	ready := p.readFolds(ctx, live)
	if len(ready) == 0 {
		return nil
	}
	ctl, err := p.readControlDoc(ctx)
	if err != nil {
		return fmt.Errorf("read control: %w", err)
	}
	gens := &genCache{store: p.store, recs: map[int64][]listedRecord{}}
	var normal []*aggTick
	from := ctl.Gen
	for _, t := range ready {
		if ctl.Gen-1-t.fd.Folded > maxFoldGens {
			t.catchUp = true
			if err := gens.list(ctx, t.fd.Folded+1, t.fd.Folded+maxFoldGens); err != nil {
				return err
			}
			continue
		}
		normal = append(normal, t)
		from = min(from, t.fd.Folded)
	}
	if err := gens.list(ctx, from+1, ctl.Gen-1); err != nil {
		return err
	}
	open, err := p.store.ListTag(ctx, dedupRecords, genTag(ctl.Gen), 1)
	if err != nil {
		return fmt.Errorf("list generation %d: %w", ctl.Gen, err)
	}
	closed := ctl.Gen - 1
	if len(open) > 0 {
		if closed, err = p.closeGen(ctx); err != nil {
			return fmt.Errorf("close generation: %w", err)
		}
		// A concurrent tick may have closed some since the read.
		if err := gens.list(ctx, ctl.Gen, closed); err != nil {
			return err
		}
	}
	// An aggregation whose records cannot be read sits this tick out.
	seen := map[string][2]time.Time{}
	var observing []*aggTick
	for _, t := range normal {
		elems, err := gens.elements(t.a, t.fd.Folded, closed)
		if err != nil {
			t.err = errors.Join(t.err, err)
			t.skip = true
			continue
		}
		ev, at := t.fd.UnseenEvent, t.fd.UnseenAccepted
		for _, e := range elems {
			ev, at = later(ev, e.Event), later(at, e.At)
		}
		seen[t.a.spec.Name] = [2]time.Time{ev, at}
		observing = append(observing, t)
	}
	adv, err := p.advance(ctx, observing, seen, closed, now)
	if err != nil {
		return fmt.Errorf("advance watermark: %w", err)
	}
	if err := gens.list(ctx, closed+1, adv.closed); err != nil {
		return err
	}
	each(ready, func(t *aggTick) {
		switch {
		case t.skip:
		case t.catchUp:
			p.catchUp(ctx, t, gens, ctl.Aggs[t.a.spec.Name].WatermarkState, now)
		default:
			p.foldAdvanced(ctx, t, gens, closed, adv, now)
		}
	})
	return nil
}

// readFolds flushes each outbox and returns the aggregations whose fold
// state it read.
func (p *Processor) readFolds(ctx context.Context, live []*aggTick) []*aggTick {
	each(live, func(t *aggTick) {
		n, left, err := p.flushOutbox(ctx, t.a.paths.outbox)
		t.at.Flushed, t.at.Pending = n, left
		if err != nil {
			t.err = errors.Join(t.err, fmt.Errorf("flush outbox: %w", err))
		}
		if t.fd, err = p.foldState(ctx, t.a); err != nil {
			t.err = errors.Join(t.err, err)
			return
		}
		t.read = true
	})
	return slices.DeleteFunc(slices.Clone(live), func(t *aggTick) bool { return !t.read })
}

// foldAdvanced folds an aggregation's generations up to the one its
// advance closed, at its new W, and appends the panes to the sink.
func (p *Processor) foldAdvanced(ctx context.Context, t *aggTick, gens *genCache, observed int64, adv advanced, now time.Time) {
	st := adv.states[t.a.spec.Name]
	elems, ok := t.start(gens, st[0].Watermark, st[1].Watermark, adv.closed, now)
	if !ok {
		return
	}
	fr, err := p.fold(ctx, foldPlan{mode: foldRecords, a: t.a, elems: elems, prior: t.fd.Folded,
		observed: observed, advanced: adv.closed, wm: st[1].Watermark, now: now}, t.fd)
	t.at.Panes, t.at.Expired, t.at.Visited = fr.panes, fr.expired, fr.visited
	t.at.Failing = append(t.at.Failing, fr.failing...)
	if err != nil {
		t.err = errors.Join(t.err, err)
	}
	if len(fr.written) == 0 {
		return
	}
	rows := 0
	for _, pe := range fr.written {
		rows += len(pe.entries)
	}
	n, err := p.flush(ctx, fr.written)
	t.at.Flushed += n
	t.at.Pending += rows - n
	if err != nil {
		t.err = errors.Join(t.err, fmt.Errorf("flush outbox: %w", err))
	}
}

// start records the W of the tick and returns the elements of the
// generations (Folded, to]; false when they cannot be read.
func (t *aggTick) start(gens *genCache, before, after time.Time, to int64, now time.Time) ([]foldElem, bool) {
	t.at.WatermarkBefore, t.at.Watermark = before, after
	if !after.IsZero() {
		t.at.Lag = now.Sub(after)
	}
	elems, err := gens.elements(t.a, t.fd.Folded, to)
	if err != nil {
		t.err = errors.Join(t.err, err)
		return nil, false
	}
	t.at.Records = len(elems)
	t.at.OpenWindows = len(t.fd.Windows) + t.fd.sessionKeys()
	return elems, true
}

func (p *Processor) catchUp(ctx context.Context, t *aggTick, gens *genCache, ws window.WatermarkState, now time.Time) {
	to := t.fd.Folded + maxFoldGens
	elems, ok := t.start(gens, ws.Watermark, ws.Watermark, to, now)
	if !ok {
		return
	}
	fr, err := p.fold(ctx, foldPlan{mode: foldCatchUp, a: t.a, elems: elems, prior: t.fd.Folded,
		observed: t.fd.Folded, advanced: to, wm: ws.Watermark, now: now}, t.fd)
	t.at.Visited = fr.visited
	t.at.Failing = append(t.at.Failing, fr.failing...)
	if err != nil {
		t.err = errors.Join(t.err, fmt.Errorf("catch up generations %d to %d: %w", t.fd.Folded+1, to, err))
	}
}

func (p *Processor) readControlDoc(ctx context.Context) (controlDoc, error) {
	var ctl controlDoc
	err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		var err error
		ctl, err = readControl(tx)
		return err
	})
	return ctl, err
}

func (p *Processor) closeGen(ctx context.Context) (int64, error) {
	var closed int64
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		ctl, err := readControl(tx)
		if err != nil {
			return err
		}
		closed = ctl.Gen
		ctl.Gen++
		return set(tx, controlPath, ctl, time.Time{})
	})
	return closed, err
}

func readControl(tx docstore.Tx) (controlDoc, error) {
	docs, err := tx.Get(controlPath)
	if err != nil {
		return controlDoc{}, err
	}
	return decodeControl(docs[0])
}

// decodeControl decodes the control document, which every order and tick
// needs: ensureControl writes it first.
func decodeControl(d docstore.Doc) (ctl controlDoc, err error) {
	if !d.Exists {
		return ctl, errors.New("the control document stream/control is missing")
	}
	err = decodeDoc(d, &ctl)
	return ctl, err
}

// genCache holds the records of final generations listed by one tick,
// decoded once for every aggregation.
type genCache struct {
	store docstore.Store
	recs  map[int64][]listedRecord
}

type listedRecord struct {
	path string
	rec  dedupDoc
	err  error // reported by elements, to the aggregations that need it
}

// list lists the generations from to to that it has not listed yet.
func (c *genCache) list(ctx context.Context, from, to int64) error {
	for g := from; g <= to; g++ {
		if _, ok := c.recs[g]; ok {
			continue
		}
		docs, err := c.store.ListTag(ctx, dedupRecords, genTag(g), 0)
		if err != nil {
			return fmt.Errorf("list generation %d: %w", g, err)
		}
		recs := make([]listedRecord, len(docs))
		for i, d := range docs {
			recs[i].path = d.Path
			recs[i].err = decodeDoc(d, &recs[i].rec)
		}
		c.recs[g] = recs
	}
	return nil
}

// elements returns the elements in aggregation a of the records of
// generations (from, to], in the order the orders were accepted.
func (c *genCache) elements(a aggregation, from, to int64) ([]foldElem, error) {
	var recs []*listedRecord
	for g := from + 1; g <= to; g++ {
		for i := range c.recs[g] {
			r := &c.recs[g][i]
			if r.err != nil {
				return nil, r.err
			}
			recs = append(recs, r)
		}
	}
	slices.SortStableFunc(recs, func(x, y *listedRecord) int {
		return cmp.Or(x.rec.ReceivedAt.Compare(y.rec.ReceivedAt), cmp.Compare(x.rec.PedidoID, y.rec.PedidoID))
	})
	var out []foldElem
	for _, r := range recs {
		els, err := recordElements(a.spec, r.rec.PedidoID, r.rec)
		if err != nil {
			return nil, unreadable(fmt.Errorf("%s: %w", r.path, err))
		}
		out = append(out, els...)
	}
	return out, nil
}

func (p *Processor) foldState(ctx context.Context, a aggregation) (foldDoc, error) {
	var fd foldDoc
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		var err error
		fd, _, _, err = readFold(tx, a)
		return err
	})
	if err != nil {
		return fd, fmt.Errorf("read %s: %w", a.paths.fold, err)
	}
	return fd, nil
}

type advanced struct {
	states map[string][2]window.WatermarkState // before and after
	closed int64                               // the last generation the fold at the new W covers
}

// advance is the watermark transaction of every aggregation of the tick:
// when some W moved, it closes the open generation too, so that every order
// classified against the W before is in a generation the fold covers.
func (p *Processor) advance(ctx context.Context, ready []*aggTick, seen map[string][2]time.Time, closed int64, now time.Time) (advanced, error) {
	var adv advanced
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		adv = advanced{states: map[string][2]window.WatermarkState{}, closed: closed}
		ctl, err := readControl(tx)
		if err != nil {
			return err
		}
		moved := false
		for _, t := range ready {
			name := t.a.spec.Name
			ac := ctl.Aggs[name]
			before := ac.WatermarkState
			after := t.a.spec.AdvanceWatermark(before.Observe(seen[name][0], seen[name][1]), now)
			adv.states[name] = [2]window.WatermarkState{before, after}
			if !sameWatermark(before, after) {
				moved = true
				ac.WatermarkState = after
				ctl.Aggs[name] = ac
			}
		}
		if !moved {
			return nil
		}
		adv.closed = ctl.Gen
		for _, t := range ready {
			ac := ctl.Aggs[t.a.spec.Name]
			ac.Advanced = ctl.Gen
			ctl.Aggs[t.a.spec.Name] = ac
		}
		ctl.Gen++
		return set(tx, controlPath, ctl, time.Time{})
	})
	return adv, err
}

func sameWatermark(a, b window.WatermarkState) bool {
	return a.Watermark.Equal(b.Watermark) && a.MaxEventTime.Equal(b.MaxEventTime) && a.LastAccepted.Equal(b.LastAccepted)
}

// reached reports wm >= t, treating the zero watermark as minus infinity.
func reached(wm, t time.Time) bool {
	return !wm.IsZero() && !wm.Before(t)
}

func (p *Processor) logTick(ctx context.Context, at AggregationTick, err error) {
	attrs := []any{"aggregation", at.Aggregation, "busy", at.Busy,
		"watermark_before", at.WatermarkBefore, "watermark", at.Watermark, "lag_seconds", at.Lag.Seconds(),
		"open_windows", at.OpenWindows, "records", at.Records, "visited", at.Visited, "panes", len(at.Panes), "expired", at.Expired,
		"flushed", at.Flushed, "pending", at.Pending, "failing_cells", at.FailingCells}
	// The log-based metric alpipe/tick_failing_cells counts these lines.
	for _, f := range at.Failing {
		fa := []any{"aggregation", f.Aggregation, "failing_cell", f.Path, "window_start", f.WindowStart, "error", f.Error}
		if !f.Since.IsZero() {
			fa = append(fa, "failing_since", f.Since)
		}
		p.log.ErrorContext(ctx, "window failing; the other windows were processed and the next tick retries it", fa...)
	}
	if !at.Busy && !at.Watermark.IsZero() {
		// Read by the log-based metric alpipe/watermark_lag_seconds.
		attrs = append(attrs, "watermark_lag_seconds", at.Lag.Seconds())
	}
	if err != nil {
		p.log.ErrorContext(ctx, "tick incomplete; the next tick continues", append(attrs, "error", err.Error())...)
		return
	}
	p.log.InfoContext(ctx, "tick", attrs...)
}
