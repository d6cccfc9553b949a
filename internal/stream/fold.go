package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// windowsPerTx bounds the windows one fold transaction rewrites beyond
// those the folded records touch (the due timers of a tick after an
// outage), keeping a transaction far from Firestore's 10 MiB.
const windowsPerTx = 8

// Tick runs the watermark timer at processing time now, for every
// aggregation: it appends rows left in the outboxes, closes the open
// generation of dedup records, and per aggregation advances W and folds
// the closed generations' elements into the window state, emitting the
// EARLY, ON_TIME, batched LATE and expiry panes. Its work is proportional
// to the orders since the last tick and the windows whose timer is due,
// never to history.
//
// Each aggregation is guarded by a lease; when another live tick holds it
// that aggregation is skipped (AggregationTick.Busy), and when all are, Tick
// returns ErrTickBusy. Running Tick again at the same now changes nothing
// but the generation. An error means some work is left for the next tick;
// nothing is lost.
func (p *Processor) Tick(ctx context.Context, now time.Time) (res TickResult, tickErr error) {
	now = now.UTC()
	res = TickResult{Now: now}
	var errs []error
	if err := p.ensureControl(ctx, now); err != nil {
		return res, err
	}
	n, left, err := p.flushOutbox(ctx, deadOutbox)
	res.DeadLetters, res.DeadLettersPending = n, left
	if err != nil {
		errs = append(errs, fmt.Errorf("flush dead letters: %w", err))
	}
	res.Aggregations = make([]AggregationTick, len(p.aggs))
	// ticks holds every aggregation's part, live or not: an aggregation
	// whose lease could not be acquired (a store failure) is not live, and
	// its error must still fail the tick.
	ticks := make([]*aggTick, len(p.aggs))
	var live []*aggTick
	for i, a := range p.aggs {
		res.Aggregations[i].Aggregation = a.spec.Name
		t := &aggTick{a: a, at: &res.Aggregations[i]}
		ticks[i] = t
		holder, err := newHolder()
		if err == nil {
			var busy bool
			busy, err = p.acquire(ctx, a, holder, now)
			t.at.Busy = busy && err == nil
		}
		if err != nil {
			t.err = fmt.Errorf("acquire lease: %w", err)
		} else if !t.at.Busy {
			t.holder = holder
			live = append(live, t)
		}
	}
	defer func() {
		for _, t := range live {
			// Released even when the caller gave up, so the next tick need
			// not wait for the lease to run out.
			if rerr := p.release(context.WithoutCancel(ctx), t.a, t.holder); rerr != nil {
				t.err = errors.Join(t.err, fmt.Errorf("release lease: %w", rerr))
			}
		}
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
	if len(live) > 0 {
		if err := p.tickLive(ctx, live, now); err != nil {
			errs = append(errs, err)
		}
	}
	return res, nil
}

// aggTick is one aggregation's part in a tick.
type aggTick struct {
	a      aggregation
	at     *AggregationTick
	holder string
	fd     foldDoc
	err    error
	// catchUp: the aggregation's fold is more than maxFoldGens generations
	// behind (after an outage): this tick only adds the next maxFoldGens
	// generations' elements, at the W it has, and neither advances W nor
	// runs triggers, so that no transaction grows with the outage.
	catchUp bool
}

// maxFoldGens bounds the generations one fold adds (about an hour of
// ticks), and so the windows one fold transaction rewrites.
const maxFoldGens = 60

// tickLive runs the tick of the aggregations whose lease it holds:
//
//  1. Each flushes its outbox and reads its fold state.
//  2. The open generation is listed; when it holds records it is closed
//     (every order transaction that read it has committed: any still
//     running conflicts on the control document and runs again with the
//     next) and listed again, now final.
//  3. One transaction observes the records' newest times, advances every
//     aggregation's W and, if some W moved, closes the generation opened
//     meanwhile, whose orders were classified against the old W; that one
//     is listed too.
//  4. Each aggregation folds the generations up to the one its advance
//     closed and runs its triggers at its new W.
//
// A tick with nothing new and nothing due writes nothing but its leases.
func (p *Processor) tickLive(ctx context.Context, live []*aggTick, now time.Time) error {
	var ready []*aggTick
	for _, t := range live {
		n, left, err := p.flushOutbox(ctx, t.a.paths.outbox)
		t.at.Flushed, t.at.Pending = n, left
		if err != nil {
			t.err = errors.Join(t.err, fmt.Errorf("flush outbox: %w", err))
		}
		if t.fd, err = p.foldState(ctx, t.a, now); err != nil {
			t.err = errors.Join(t.err, err)
			continue
		}
		ready = append(ready, t)
	}
	if len(ready) == 0 {
		return nil
	}
	ctl, err := p.readControlDoc(ctx)
	if err != nil {
		return fmt.Errorf("read control: %w", err)
	}
	gens := &genCache{docs: map[int64][]docstore.Doc{}}
	var normal []*aggTick
	from := ctl.Gen
	for _, t := range ready {
		if ctl.Gen-1-t.fd.Folded > maxFoldGens {
			t.catchUp = true
			for g := t.fd.Folded + 1; g <= t.fd.Folded+maxFoldGens; g++ {
				if err := gens.list(ctx, p.store, g); err != nil {
					return err
				}
			}
			continue
		}
		normal = append(normal, t)
		from = min(from, t.fd.Folded)
	}
	for g := from + 1; g < ctl.Gen; g++ {
		if err := gens.list(ctx, p.store, g); err != nil {
			return err
		}
	}
	open, err := p.store.ListTag(ctx, dedupRecords, genTag(ctl.Gen))
	if err != nil {
		return fmt.Errorf("list generation %d: %w", ctl.Gen, err)
	}
	closed := ctl.Gen - 1
	if len(open) > 0 {
		if closed, err = p.closeGen(ctx); err != nil {
			return fmt.Errorf("close generation: %w", err)
		}
		// A concurrent tick may have closed some since the read.
		for g := ctl.Gen; g <= closed; g++ {
			if err := gens.list(ctx, p.store, g); err != nil {
				return err
			}
		}
	}
	adv, err := p.advance(ctx, normal, gens, closed, now)
	if err != nil {
		return fmt.Errorf("advance watermark: %w", err)
	}
	for g := closed + 1; g <= adv.closed; g++ {
		if err := gens.list(ctx, p.store, g); err != nil {
			return err
		}
	}
	for _, t := range ready {
		a := t.a
		if t.catchUp {
			p.catchUp(ctx, t, gens, ctl.Aggs[a.spec.Name].WatermarkState, now)
			continue
		}
		st := adv.states[a.spec.Name]
		t.at.WatermarkBefore, t.at.Watermark = st[0].Watermark, st[1].Watermark
		if !st[1].Watermark.IsZero() {
			t.at.Lag = now.Sub(st[1].Watermark)
		}
		elems, err := gens.elements(a, t.fd.Folded, adv.closed)
		if err != nil {
			t.err = errors.Join(t.err, err)
			continue
		}
		t.at.Records = len(elems)
		t.at.OpenWindows = len(t.fd.Windows)
		fr, err := p.fold(ctx, a, t.fd, elems, adv.closed, st[1].Watermark, now)
		t.at.Panes, t.at.Expired, t.at.Visited = fr.panes, fr.expired, fr.visited
		t.at.Failing = append(t.at.Failing, fr.failing...)
		if err != nil {
			t.err = errors.Join(t.err, err)
		}
		if len(fr.written) > 0 {
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
	}
	return nil
}

// catchUp adds the next maxFoldGens generations of a lagging aggregation
// at its current W, without triggers (see aggTick.catchUp).
func (p *Processor) catchUp(ctx context.Context, t *aggTick, gens *genCache, ws window.WatermarkState, now time.Time) {
	t.at.WatermarkBefore, t.at.Watermark = ws.Watermark, ws.Watermark
	if !ws.Watermark.IsZero() {
		t.at.Lag = now.Sub(ws.Watermark)
	}
	to := t.fd.Folded + maxFoldGens
	elems, err := gens.elements(t.a, t.fd.Folded, to)
	if err != nil {
		t.err = errors.Join(t.err, err)
		return
	}
	t.at.Records = len(elems)
	t.at.OpenWindows = len(t.fd.Windows)
	fr, err := p.foldTx(ctx, t.a, elems, nil, true, true, false, t.fd.Folded, to, ws.Watermark, now)
	t.at.Visited = fr.visited
	t.at.Failing = append(t.at.Failing, fr.failing...)
	if err != nil {
		t.err = errors.Join(t.err, fmt.Errorf("catch up generations %d to %d: %w", t.fd.Folded+1, to, err))
	}
}

// readControlDoc reads the control document outside a transaction's
// writes.
func (p *Processor) readControlDoc(ctx context.Context) (controlDoc, error) {
	var ctl controlDoc
	err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		var err error
		ctl, err = readControl(tx)
		return err
	})
	return ctl, err
}

// closeGen closes the open generation and returns it.
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
	if !docs[0].Exists {
		return controlDoc{}, errors.New("the control document stream/control is missing")
	}
	var ctl controlDoc
	if err := decodeDoc(docs[0], &ctl); err != nil {
		return controlDoc{}, err
	}
	return ctl, nil
}

// genCache holds the records of final generations listed by one tick, for
// every aggregation to fold from.
type genCache struct {
	docs map[int64][]docstore.Doc
}

func (c *genCache) list(ctx context.Context, s docstore.Store, g int64) error {
	if _, ok := c.docs[g]; ok {
		return nil
	}
	docs, err := s.ListTag(ctx, dedupRecords, genTag(g))
	if err != nil {
		return fmt.Errorf("list generation %d: %w", g, err)
	}
	c.docs[g] = docs
	return nil
}

// elements returns the elements in aggregation a of the records of
// generations (from, to], in the order the orders were accepted.
func (c *genCache) elements(a aggregation, from, to int64) ([]foldElem, error) {
	var out []foldElem
	for g := from + 1; g <= to; g++ {
		for _, d := range c.docs[g] {
			var rec dedupDoc
			if err := decodeDoc(d, &rec); err != nil {
				return nil, err
			}
			els, err := recordElements(a.spec, rec.PedidoID, rec)
			if err != nil {
				return nil, unreadable(fmt.Errorf("%s: %w", d.Path, err))
			}
			out = append(out, els...)
		}
	}
	slices.SortStableFunc(out, func(x, y foldElem) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.PedidoID, y.PedidoID))
	})
	return out, nil
}

// foldState reads the aggregation's fold document; on the first tick of
// this layout it migrates the previous layout's state into it.
func (p *Processor) foldState(ctx context.Context, a aggregation, now time.Time) (foldDoc, error) {
	var (
		fd     foldDoc
		exists bool
		since  int64
	)
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		fd, exists = foldDoc{}, false
		docs, err := tx.Get(a.paths.foldPath(), controlPath)
		if err != nil {
			return err
		}
		var ctl controlDoc
		if err := decodeDoc(docs[1], &ctl); err != nil {
			return err
		}
		since = ctl.Aggs[a.spec.Name].Since
		exists = docs[0].Exists
		return decodeDoc(docs[0], &fd)
	})
	if err != nil {
		return fd, fmt.Errorf("read %s: %w", a.paths.foldPath(), err)
	}
	if exists && !fd.Migrating {
		return fd, nil
	}
	return p.migrate(ctx, a, max(0, since-1), now)
}

// advanced is what the watermark transaction did: per aggregation its
// state before and after, and the last generation whose records the fold
// at the new W must cover.
type advanced struct {
	states map[string][2]window.WatermarkState
	closed int64
}

// advance is the watermark transaction, one for every aggregation of the
// tick: it observes the newest event and acceptance times of the records
// up to closed, advances each W and, when some W moved, closes the open
// generation with it, so that every order classified against the W before
// is in a generation the fold covers. It writes nothing when no W moved.
func (p *Processor) advance(ctx context.Context, ready []*aggTick, gens *genCache, closed int64, now time.Time) (advanced, error) {
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
			after := before
			elems, err := gens.elements(t.a, t.fd.Folded, closed)
			if err != nil {
				return err
			}
			for _, e := range elems {
				after = after.Observe(e.Event, e.At)
			}
			after = t.a.spec.AdvanceWatermark(after, now)
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

// foldResult is what a fold did.
type foldResult struct {
	panes   []window.Pane
	expired int
	visited int
	failing []FailingCell
	written []pending
}

// fold adds elems (the records of the generations up to advanced) to their
// windows and runs the trigger of every key of the windows they touched or
// whose timer is due, at W wm: one transaction for the records (with up to
// windowsPerTx due windows), then one per windowsPerTx further due windows.
func (p *Processor) fold(ctx context.Context, a aggregation, fd foldDoc, elems []foldElem, advanced int64, wm, now time.Time) (foldResult, error) {
	var fr foldResult
	touched := map[string]bool{}
	for _, e := range elems {
		touched[windowID(e.Window.Start)] = true
	}
	var due []string
	parked := false
	for _, id := range slices.Sorted(maps.Keys(fd.Windows)) {
		parked = parked || fd.Windows[id].Parked
		if !touched[id] && isDue(a.spec, fd.Windows[id], wm, now) {
			due = append(due, id)
		}
	}
	first := min(len(due), max(0, windowsPerTx-len(touched)))
	chunks := [][]string{due[:first]}
	for rest := due[first:]; len(rest) > 0; rest = rest[min(len(rest), windowsPerTx):] {
		chunks = append(chunks, rest[:min(len(rest), windowsPerTx)])
	}
	for i, ids := range chunks {
		var ce []foldElem
		if i == 0 {
			ce = elems
		}
		r, err := p.foldTx(ctx, a, ce, ids, i == 0, false, parked, fd.Folded, advanced, wm, now)
		fr.panes = append(fr.panes, r.panes...)
		fr.expired += r.expired
		fr.visited += r.visited
		fr.failing = append(fr.failing, r.failing...)
		fr.written = append(fr.written, r.written...)
		if err != nil {
			return fr, err
		}
	}
	slices.SortFunc(fr.panes, func(x, y window.Pane) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Index, y.Index))
	})
	return fr, nil
}

// isDue reports whether a window needs the trigger without new elements:
// its processing-time timer is due, its ON_TIME round or its expiry is
// reached, or its state failed before.
func isDue(s window.Spec, e windowEntry, wm, now time.Time) bool {
	w := e.window()
	return (!e.Due.IsZero() && !now.Before(e.Due)) ||
		(reached(wm, w.End) && !e.OnTimeDone) ||
		reached(wm, s.ExpiryOf(w)) ||
		e.Error != "" || e.Parked
}

// foldTx is one fold transaction. With records it adds elems to their
// windows and moves Folded from prior to advanced (a concurrent tick that
// got there first makes it do nothing); without, it runs the due windows
// ids. Every key of a visited window gets its trigger; a window whose
// state cannot be read is reported and its elements are parked, so the
// others go on.
func (p *Processor) foldTx(ctx context.Context, a aggregation, elems []foldElem, ids []string, records, addOnly, anyParked bool, prior, advanced int64, wm, now time.Time) (foldResult, error) {
	var fr foldResult
	var parked []parkedSet
	if anyParked {
		var err error
		if parked, err = p.listParked(ctx, a); err != nil {
			return fr, err
		}
	}
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		fr = foldResult{}
		docs, err := tx.Get(a.paths.foldPath(), controlPath)
		if err != nil {
			return err
		}
		var fd foldDoc
		if err := decodeDoc(docs[0], &fd); err != nil {
			return err
		}
		var ctl controlDoc
		if err := decodeDoc(docs[1], &ctl); err != nil {
			return err
		}
		if records && (fd.Folded != prior || fd.Migrating || (!addOnly && ctl.Aggs[a.spec.Name].Advanced > advanced)) {
			return nil // a concurrent tick folded, or advanced again: its fold covers these
		}
		if fd.Windows == nil {
			fd.Windows = map[string]windowEntry{}
		}
		visit := map[string]*windowState{}
		for _, id := range ids {
			if e, ok := fd.Windows[id]; ok {
				visit[id] = &windowState{entry: e}
			}
		}
		for _, e := range elems {
			id := windowID(e.Window.Start)
			if visit[id] != nil {
				continue
			}
			ent, ok := fd.Windows[id]
			if !ok {
				ent = windowEntry{Start: e.Window.Start, End: e.Window.End, Parts: 1}
			}
			visit[id] = &windowState{entry: ent}
		}
		for _, e := range elems {
			// A late order that wrote the window itself says how many
			// parts it left.
			ws := visit[windowID(e.Window.Start)]
			ws.entry.Parts = max(ws.entry.Parts, e.Parts)
		}
		order := slices.Sorted(maps.Keys(visit))
		wins := make([]*windowState, len(order))
		for i, id := range order {
			wins[i] = visit[id]
		}
		bad, err := readWindows(tx, a, wins)
		if err != nil {
			return err
		}
		for _, ws := range wins {
			if err, ok := bad[ws]; ok {
				ws.keys = nil
				ws.entry.Error = clip(err.Error(), maxCellError)
				if ws.entry.FailingSince.IsZero() {
					ws.entry.FailingSince = now
				}
			}
		}
		// Parked elements of windows readable again come first: they were
		// accepted before anything listed now.
		var all []foldElem
		var unpark []string
		for _, pk := range parked {
			if ws := visit[windowID(pk.start)]; ws != nil && ws.keys != nil {
				all = append(all, pk.elems...)
				unpark = append(unpark, pk.path)
			}
		}
		all = append(all, elems...)
		var entries []entry
		park := map[string][]foldElem{}
		for from := 0; from < len(all); {
			to := from + 1
			for to < len(all) && all[to].PedidoID == all[from].PedidoID && all[to].At.Equal(all[from].At) {
				to++
			}
			rec := all[from:to]
			from = to
			if e, ok := p.addRecord(a, visit, rec, park); !ok {
				entries = append(entries, e)
			}
		}
		for _, id := range order {
			ws := visit[id]
			if ws.keys == nil {
				fr.failing = append(fr.failing, FailingCell{Aggregation: a.spec.Name, Path: a.paths.statePart(ws.entry.Start, 0),
					WindowStart: ws.entry.Start, WindowEnd: ws.entry.End, Error: ws.entry.Error, Since: ws.entry.FailingSince})
				if len(park[id]) > 0 {
					ws.entry.Parked = true
					if err := set(tx, a.paths.parkedOf(ws.entry.Start, advanced), parkedDoc{Elements: park[id]}, time.Time{}); err != nil {
						return err
					}
				}
				fd.Windows[id] = ws.entry
				continue
			}
			if addOnly {
				// The triggers run once the fold has caught up; parked
				// elements are taken then too (Parked stays).
				ws.entry.Due = now
				ws.entry.Error, ws.entry.FailingSince = "", time.Time{}
				if err := writeWindow(tx, a, ws); err != nil {
					return err
				}
				fd.Windows[id] = ws.entry
				continue
			}
			es, gone, err := p.trigger(a, ws, wm, now, &fr)
			if err != nil {
				return err
			}
			entries = append(entries, es...)
			if gone {
				for _, pp := range partPaths(a, ws.entry) {
					if err := tx.Delete(pp); err != nil {
						return fmt.Errorf("delete %s: %w", pp, err)
					}
				}
				delete(fd.Windows, id)
				continue
			}
			ws.entry.Error, ws.entry.FailingSince, ws.entry.Parked = "", time.Time{}, false
			if err := writeWindow(tx, a, ws); err != nil {
				return err
			}
			fd.Windows[id] = ws.entry
		}
		for _, pp := range unpark {
			if err := tx.Delete(pp); err != nil {
				return fmt.Errorf("delete %s: %w", pp, err)
			}
		}
		for len(entries) > 0 {
			k := min(len(entries), outboxRowsPerDoc)
			pe, err := p.writeEntries(tx, a.paths.outbox, entries[:k])
			if err != nil {
				return err
			}
			fr.written = append(fr.written, pe)
			entries = entries[k:]
		}
		if records {
			fd.Folded = advanced
		}
		nd, err := encodeDoc(a.paths.foldPath(), fd, time.Time{})
		if err != nil {
			return err
		}
		if docs[0].Exists && string(nd.Data) == string(docs[0].Data) {
			return nil // nothing changed: a repeated tick writes nothing
		}
		return tx.Set(nd)
	})
	if err != nil {
		// Nothing of a transaction that did not commit may reach the
		// warehouse: its panes would carry indexes the next fold reuses.
		return foldResult{}, err
	}
	return fr, nil
}

// addRecord adds one order's elements in aggregation a to the windows'
// keys. When one of them would take its key's total out of the range
// BigQuery stores, none is added and the row dead-lettering the order in
// this aggregation is returned (ok false). Elements of a window whose
// state cannot be read go to park.
func (p *Processor) addRecord(a aggregation, visit map[string]*windowState, rec []foldElem, park map[string][]foldElem) (entry, bool) {
	type change struct {
		ws  *windowState
		key string
		ks  keyState
	}
	var changes []change
	staged := map[*windowState]map[string]keyState{}
	for _, e := range rec {
		id := windowID(e.Window.Start)
		ws := visit[id]
		if ws.keys == nil {
			park[id] = append(park[id], e)
			continue
		}
		if e.Applied {
			// Its correction went out with the order: the fold only keeps
			// the window on the agenda (the watermark saw its times).
			ws.dirty = true
			continue
		}
		if staged[ws] == nil {
			staged[ws] = map[string]keyState{}
		}
		ks, ok := staged[ws][e.Key]
		if !ok {
			ks = ws.keys[e.Key]
		}
		sum, err := a.spec.Accept(ks.Sum, ks.State, e.order(), e.Wm, e.At)
		if err != nil {
			w := e.Window
			return p.rows.discardEntry(overflowRowID(a.spec.Name, e.PedidoID), discard{
				PedidoID: e.PedidoID, Aggregation: a.spec.Name,
				Reason:    fmt.Sprintf("invalid: aggregation %s: window %s key %q: %v", a.spec.Name, w.Start.Format(time.RFC3339), e.Key, err),
				EventTime: e.Event, WindowStart: w.Start, Watermark: e.Wm, ReceivedAt: e.At, MessageID: e.Message,
			}), false
		}
		ks.Sum = sum
		staged[ws][e.Key] = ks
		changes = append(changes, change{ws: ws, key: e.Key, ks: ks})
	}
	for _, c := range changes {
		c.ws.keys[c.key] = c.ks
		c.ws.dirty = true
	}
	return entry{}, true
}

// trigger runs OnTick for every key of a window at W wm, keeps the new
// states and returns the panes' outbox rows; gone: every key expired.
func (p *Processor) trigger(a aggregation, ws *windowState, wm, now time.Time, fr *foldResult) ([]entry, bool, error) {
	w := ws.entry.window()
	var entries []entry
	var next time.Time
	for _, k := range slices.Sorted(maps.Keys(ws.keys)) {
		ks := ws.keys[k]
		wk := window.WindowKey{Window: w, Key: k}
		fr.visited++
		c, err := window.Combine(ks.State, []window.Shard{ks.Sum})
		if err != nil {
			return nil, false, err
		}
		out, err := a.spec.OnTick(wk, ks.State, c, wm, now)
		if err != nil {
			return nil, false, err
		}
		if out.Pane != nil {
			entries = append(entries, p.rows.paneEntry(*out.Pane))
			fr.panes = append(fr.panes, *out.Pane)
			if ks.Sum, err = fold(out.State, ks.Sum); err != nil {
				return nil, false, err
			}
		}
		if out.Expired {
			delete(ws.keys, k)
			fr.expired++
			ws.dirty = true
			continue
		}
		if out.State != ks.State || out.Pane != nil {
			ws.dirty = true
		}
		ks.State = out.State
		ws.keys[k] = ks
		if d := nextDue(a.spec, wk, ks.State, ks.Sum, wm, now); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	ws.entry.Due = next
	ws.entry.OnTimeDone = reached(wm, w.End)
	return entries, len(ws.keys) == 0, nil
}

// nextDue is when a key's trigger next fires on processing time alone:
// the EARLY (before the end) or LATE delay after its first change not yet
// in a pane; zero when every change is in a pane.
func nextDue(s window.Spec, wk window.WindowKey, st window.PaneState, sum window.Shard, wm, now time.Time) time.Time {
	c, err := window.Combine(st, []window.Shard{sum})
	if err != nil || (c.Total == st.Emitted && c.FirstPending.IsZero()) {
		return time.Time{}
	}
	if c.FirstPending.IsZero() {
		return now // an unknown time counts as due, as in the trigger
	}
	if !reached(wm, wk.Window.End) && (st.OnTime == "" || st.OnTime == window.OnTimePending) {
		return c.FirstPending.Add(s.EarlyDelay)
	}
	return c.FirstPending.Add(s.LateDelay)
}

// parked is a parked document of a window.
type parkedSet struct {
	path  string
	start time.Time
	elems []foldElem
}

// listParked lists the parked elements (of windows whose state failed
// before; the agenda marks them, and only then is this listed).
func (p *Processor) listParked(ctx context.Context, a aggregation) ([]parkedSet, error) {
	docs, err := p.store.List(ctx, a.paths.parked)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", a.paths.parked, err)
	}
	var out []parkedSet
	for _, d := range docs {
		var pd parkedDoc
		if err := decodeDoc(d, &pd); err != nil {
			return nil, err
		}
		if len(pd.Elements) == 0 {
			continue
		}
		out = append(out, parkedSet{path: d.Path, start: pd.Elements[0].Window.Start, elems: pd.Elements})
	}
	return out, nil
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
	// One line per failing cell, each carrying failing_cell: the
	// log-based metric alpipe/tick_failing_cells counts them.
	for _, f := range at.Failing {
		fa := []any{"aggregation", f.Aggregation, "failing_cell", f.Path, "window_start", f.WindowStart, "key", f.Key, "error", f.Error}
		if !f.Since.IsZero() {
			fa = append(fa, "failing_since", f.Since)
		}
		p.log.ErrorContext(ctx, "window failing; the other windows were processed and the next tick retries it", fa...)
	}
	if !at.Busy && !at.Watermark.IsZero() {
		// The field the log-based metric alpipe/watermark_lag_seconds
		// reads; none while W is at minus infinity or another tick ran.
		attrs = append(attrs, "watermark_lag_seconds", at.Lag.Seconds())
	}
	if err != nil {
		p.log.ErrorContext(ctx, "tick incomplete; the next tick continues", append(attrs, "error", err.Error())...)
		return
	}
	p.log.InfoContext(ctx, "tick", attrs...)
}
