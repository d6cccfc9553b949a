package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
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
	n, left, err := p.flushOutbox(ctx, a.paths.outbox)
	at.Flushed, at.Pending = n, left
	if err != nil {
		// The state work below does not need the sink; its panes wait in
		// the outbox with the others.
		errs = append(errs, fmt.Errorf("flush outbox: %w", err))
	}

	changes, badDeltas, err := p.changes(ctx, a)
	if err != nil {
		return at, errors.Join(append(errs, err)...)
	}
	agendas, badAgendas, err := p.agendas(ctx, a)
	if err != nil {
		return at, errors.Join(append(errs, err)...)
	}
	at.Failing = append(badDeltas, badAgendas...)
	defer func() {
		sortFailing(at.Failing)
		at.FailingCells = len(at.Failing)
		at.Failing = at.Failing[:min(len(at.Failing), MaxReportedFailing)]
	}()
	before, after, err := p.advance(ctx, a, changes, agendas, unreadablePaths(badAgendas), now)
	if err != nil {
		return at, errors.Join(append(errs, fmt.Errorf("advance watermark: %w", err))...)
	}
	at.WatermarkBefore, at.Watermark = before.Watermark, after.Watermark
	if !after.Watermark.IsZero() {
		at.Lag = now.Sub(after.Watermark)
	}
	for _, ag := range agendas {
		at.OpenWindows += len(ag.doc.Cells)
	}

	visits, notes := plan(a.spec, agendas, changes, after.Watermark, now)
	at.Visited = len(visits)
	p.relist(ctx, a, visits, after.Watermark)
	for _, c := range changes {
		at.Deltas += len(c.paths)
	}
	panes, expired, written, err := p.tickCells(ctx, a, visits, now)
	at.Panes, at.Expired = panes, expired
	if err != nil {
		errs = append(errs, err)
	}
	for _, v := range visits {
		if errors.Is(v.err, ErrUnreadableState) {
			at.Failing = append(at.Failing, failingOf(a, v.wk, v.err, v.failingSince(agendas, now)))
		}
	}
	if err := p.updateAgendas(ctx, a, append(visits, notes...)); err != nil {
		errs = append(errs, fmt.Errorf("update agenda: %w", err))
	}

	// The panes just written, without listing the outbox again: whatever
	// stays there is appended by the next tick's first flush.
	if len(written) > 0 {
		rows := 0
		for _, pe := range written {
			rows += len(pe.entries)
		}
		n, err := p.flush(ctx, written)
		at.Flushed += n
		at.Pending += rows - n
		if err != nil {
			errs = append(errs, fmt.Errorf("flush outbox: %w", err))
		}
	}
	return at, errors.Join(errs...)
}

// change is what the deltas listed at the start of a tick say about one
// cell: where they are and the newest times in them.
type change struct {
	wk       window.WindowKey
	paths    []string
	parts    []window.Shard
	maxEvent time.Time
	last     time.Time
}

// changes lists the deltas: a snapshot query, which takes no lock, so the
// orders writing deltas meanwhile are not held up. A delta committed after
// it is seen by the next tick, as if its orders had arrived just after this
// one.
//
// A delta that cannot be read is reported, not fatal. When its path names
// its cell, the cell is listed with it, so that the cell's visits read it
// and fail (and are retried) rather than emit panes without it.
func (p *Processor) changes(ctx context.Context, a aggregation) (map[string]*change, []FailingCell, error) {
	docs, err := p.store.List(ctx, a.paths.deltas)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", a.paths.deltas, err)
	}
	out := map[string]*change{}
	var bad []FailingCell
	for _, d := range docs {
		var dd deltaDoc
		if err := decodeDoc(d, &dd); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return nil, nil, err
			}
			f := failingDoc(a, d.Path, err)
			bad = append(bad, f)
			if f.WindowStart.IsZero() {
				continue
			}
			// Its part is unknown: the zero part leaves the watermark as
			// it is, and its fingerprint makes the cell's visit due.
			dd = deltaDoc{WindowStart: f.WindowStart, WindowEnd: f.WindowEnd, Key: f.Key}
		}
		wk := dd.windowKey()
		id := cellID(wk)
		c := out[id]
		if c == nil {
			c = &change{wk: wk}
			out[id] = c
		}
		c.paths, c.parts = append(c.paths, d.Path), append(c.parts, dd.Part)
		c.maxEvent, c.last = newest(window.Shard{MaxEventTime: c.maxEvent, LastAccepted: c.last}, dd.Part)
	}
	return out, bad, nil
}

// agendaEntry is one agenda document as a tick knows it.
type agendaEntry struct {
	path string
	doc  agendaDoc
}

// agendas lists the agenda: one document per open window, written by ticks
// only. A document that cannot be read is reported and left alone: its
// window's cells wait, with their deltas, until it can be.
func (p *Processor) agendas(ctx context.Context, a aggregation) (map[string]*agendaEntry, []FailingCell, error) {
	docs, err := p.store.List(ctx, a.paths.agenda)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", a.paths.agenda, err)
	}
	out := make(map[string]*agendaEntry, len(docs))
	var bad []FailingCell
	for _, d := range docs {
		e := &agendaEntry{path: d.Path}
		if err := decodeDoc(d, &e.doc); err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return nil, nil, err
			}
			bad = append(bad, failingDoc(a, d.Path, err))
			continue
		}
		out[d.Path] = e
	}
	return out, bad, nil
}

// unreadablePaths are the paths of fs.
func unreadablePaths(fs []FailingCell) map[string]bool {
	out := make(map[string]bool, len(fs))
	for _, f := range fs {
		out[f.Path] = true
	}
	return out
}

// advance is the watermark transaction: it folds the listed deltas' newest
// event and acceptance times into the watermark state, advances W, and
// indexes the cells that are new to the agenda. It reads only documents
// ticks write, so it never waits on an order's transaction for more than
// the watermark that orders read.
//
// A cell whose agenda document cannot be read (skip) is not indexed: it
// waits with its deltas, and the document is reported at every tick.
func (p *Processor) advance(ctx context.Context, a aggregation, changes map[string]*change, agendas map[string]*agendaEntry, skip map[string]bool, now time.Time) (before, after window.WatermarkState, err error) {
	news := map[string][]*change{} // agenda path -> cells it lacks
	for id, c := range changes {
		ap := a.paths.agendaOf(c.wk.Window)
		if skip[ap] {
			continue
		}
		if e, ok := agendas[ap]; ok {
			if _, in := e.doc.Cells[id]; in {
				continue
			}
		}
		news[ap] = append(news[ap], c)
	}
	agendaPaths := slices.Sorted(maps.Keys(news))
	var updated []*agendaEntry
	err = p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		before, after, updated = window.WatermarkState{}, window.WatermarkState{}, nil
		docs, err := tx.Get(append([]string{a.paths.watermark}, agendaPaths...)...)
		if err != nil {
			return err
		}
		if err := decodeDoc(docs[0], &before); err != nil {
			return err
		}
		after = before
		for _, c := range changes {
			after = after.Observe(c.maxEvent, c.last)
		}
		after = a.spec.AdvanceWatermark(after, now)
		if !sameWatermark(before, after) {
			if err := set(tx, a.paths.watermark, after, time.Time{}); err != nil {
				return err
			}
		}
		for i, ap := range agendaPaths {
			w := news[ap][0].wk.Window
			e := &agendaEntry{path: ap, doc: agendaDoc{WindowStart: w.Start, WindowEnd: w.End}}
			if err := decodeDoc(docs[i+1], &e.doc); err != nil {
				return err
			}
			if e.doc.Cells == nil {
				e.doc.Cells = map[string]agendaCell{}
			}
			for _, c := range news[ap] {
				if _, in := e.doc.Cells[cellID(c.wk)]; !in {
					e.doc.Cells[cellID(c.wk)] = agendaCell{Key: c.wk.Key}
				}
			}
			if err := set(tx, ap, e.doc, time.Time{}); err != nil {
				return err
			}
			updated = append(updated, e)
		}
		return nil
	})
	if err != nil {
		return before, after, err
	}
	for _, e := range updated {
		agendas[e.path] = e
	}
	return before, after, nil
}

// visit is a cell a tick runs the trigger of, and the outcome.
type visit struct {
	wk     window.WindowKey
	agenda string
	listed []string // its deltas as listed
	// all: read every delta the cell may have, because the pane now due
	// (ON_TIME, or the last one at expiry) must cover every order accepted
	// before it.
	all bool
	// onTime: the window's ON_TIME round; the agenda records it done once
	// every cell of the window was ticked.
	onTime bool
	// fresh: listed comes from a listing taken after W reached listedW was
	// committed (relist), so it holds every delta an order wrote while it
	// read a W short of listedW.
	fresh   bool
	listedW time.Time
	pane    *window.Pane
	gone    bool      // expired and deleted, or already gone
	due     time.Time // the cell's next processing-time timer
	seen    string    // fingerprint of the deltas left unfolded
	ran     bool      // a visit; else a note of a new due time
	err     error
	since   time.Time // when the cell first failed; set with an unreadable err
}

// failingSince is when v's cell started failing: as its agenda recorded,
// or now when this is its first failure.
func (v *visit) failingSince(agendas map[string]*agendaEntry, now time.Time) time.Time {
	if e, ok := agendas[v.agenda]; ok {
		if c, in := e.doc.Cells[cellID(v.wk)]; in && !c.FailingSince.IsZero() {
			v.since = c.FailingSince
			return v.since
		}
	}
	v.since = now
	return now
}

// plan picks the cells that may change at this tick: those whose timer is
// due, and every cell of a window whose end or expiry the watermark has
// reached. A cell with new deltas and nothing due is not visited: the
// deltas' own pending marks say when its EARLY (or LATE) delay runs out, and
// a note puts that in the agenda. Any other cell's trigger would do nothing.
func plan(s window.Spec, agendas map[string]*agendaEntry, changes map[string]*change, wm, now time.Time) (visits, notes []*visit) {
	for _, ap := range slices.Sorted(maps.Keys(agendas)) {
		ag := agendas[ap].doc
		w := ag.window()
		expired := reached(wm, s.ExpiryOf(w))
		onTime := reached(wm, w.End) && !ag.OnTimeDone
		for _, id := range slices.Sorted(maps.Keys(ag.Cells)) {
			c := ag.Cells[id]
			v := &visit{wk: window.WindowKey{Window: w, Key: c.Key}, agenda: ap, all: expired || onTime, onTime: onTime}
			due := c.Due
			ch := changes[id]
			if ch != nil {
				v.listed = ch.paths
				if fp := fingerprint(ch.parts); fp != c.Seen {
					d, ok := deltaDue(s, w, ch.parts, wm)
					if !ok {
						due = now // a delta with nothing pending (a late cell's notice): fold it now
					} else if due.IsZero() || d.Before(due) {
						due = d
					}
					if !expired && !onTime && now.Before(due) {
						v.due, v.seen = due, fp
						notes = append(notes, v)
						continue
					}
				}
			}
			if expired || onTime || (!due.IsZero() && !now.Before(due)) {
				visits = append(visits, v)
			}
		}
	}
	return visits, notes
}

// deltaDue is when the earliest pending change among parts is due: the
// EARLY delay before the window's end, the LATE delay after it. ok is false
// when no part is pending.
func deltaDue(s window.Spec, w window.Window, parts []window.Shard, wm time.Time) (time.Time, bool) {
	var first time.Time
	for _, p := range parts {
		if !p.PendingSince.IsZero() && (first.IsZero() || p.PendingSince.Before(first)) {
			first = p.PendingSince
		}
	}
	if first.IsZero() {
		return time.Time{}, false
	}
	if reached(wm, w.End) {
		return first.Add(s.LateDelay), true
	}
	return first.Add(s.EarlyDelay), true
}

// cellsPerTx is how many cells one tick transaction visits at most: their
// panes go into one outbox document instead of one each, and the
// transaction reads the cells, then their deltas, in one call each.
const cellsPerTx = 16

// tickCells runs the visits, in transactions of up to cellsPerTx cells
// each. A visit that fails with ErrUnreadableState is left out of the
// error (the caller reports its cell as failing) and does not stop the
// other cells of its transaction. It returns the panes emitted and the
// outbox documents written.
func (p *Processor) tickCells(ctx context.Context, a aggregation, visits []*visit, now time.Time) ([]window.Pane, int, []pending, error) {
	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, cellWorkers)
		mu      sync.Mutex
		written []pending
	)
	for start := 0; start < len(visits); start += cellsPerTx {
		group := visits[start:min(start+cellsPerTx, len(visits))]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for rest := group; len(rest) > 0; {
				n, pe, err := p.tickChunk(ctx, a, rest, now)
				if err != nil {
					for _, v := range rest {
						if v.err == nil {
							v.err = err
						}
						v.ran = true
					}
					return
				}
				for _, v := range rest[:n] {
					v.ran = true
				}
				if pe != nil {
					mu.Lock()
					written = append(written, *pe)
					mu.Unlock()
				}
				rest = rest[n:]
			}
		}()
	}
	wg.Wait()
	var (
		panes   []window.Pane
		expired int
		errs    []error
	)
	for _, v := range visits {
		switch {
		case errors.Is(v.err, ErrUnreadableState):
			continue // reported as failing, not an error of the tick
		case v.err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", a.paths.cell(v.wk), v.err))
			continue
		case v.gone:
			expired++
		}
		if v.pane != nil {
			panes = append(panes, *v.pane)
		}
	}
	slices.SortFunc(panes, func(x, y window.Pane) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Index, y.Index))
	})
	return panes, expired, written, errors.Join(errs...)
}

// tickCell is the tick transaction of one cell (tickChunk of one visit).
func (p *Processor) tickCell(ctx context.Context, a aggregation, v *visit, now time.Time) error {
	_, _, err := p.tickChunk(ctx, a, []*visit{v}, now)
	if err == nil {
		err = v.err
	}
	return err
}

// tickChunk is one tick transaction over a prefix of vs (at least one
// visit), as many as a transaction's writes allow; it returns how many,
// and the outbox document of their panes. Per cell it folds the cell's
// deltas in, runs the trigger and writes the pane, or deletes the expired
// cell. It reads W again rather than trusting the tick's: a concurrent,
// later tick may have moved it, and a pane must never carry a watermark
// older than one its cell already saw. A cell with nothing to do is not
// written, so re-running a tick is read-only. A cell whose state cannot
// be read gets its error in visit.err and writes nothing; the others
// commit.
func (p *Processor) tickChunk(ctx context.Context, a aggregation, vs []*visit, now time.Time) (int, *pending, error) {
	var (
		n  int
		pe *pending
	)
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		n, pe = len(vs), nil
		for _, v := range vs {
			v.pane, v.gone, v.due, v.seen, v.err = nil, false, time.Time{}, "", nil
		}
		cellPaths := make([]string, len(vs))
		for i, v := range vs {
			cellPaths[i] = a.paths.cell(v.wk)
		}
		docs, err := tx.Get(append([]string{a.paths.watermark}, cellPaths...)...)
		if err != nil {
			return err
		}
		var ws window.WatermarkState
		if err := decodeDoc(docs[0], &ws); err != nil {
			return err
		}
		// Every delta, when the W read here makes the pane owed now one
		// that must cover every order accepted before it, even if the W
		// the tick planned with did not: a concurrent tick may have moved
		// W past the window's end or expiry since. Reading only the
		// listed deltas then would expire the cell while a delta written
		// after the listing survives it (recreating the cell at pane
		// index 0, whose panes clash with the ones already appended), or
		// emit the ON_TIME pane without on-time orders. A fresh listing
		// (relist) already holds them.
		cvs := make([]cellView, len(vs))
		deltaPaths := make([][]string, len(vs))
		var all []string
		writes := 1 // the outbox document
		for i, v := range vs {
			cv, err := cellOf(a, v.wk, docs[i+1])
			if err != nil {
				v.err = err
				continue
			}
			cvs[i] = cv
			need := (v.all || mustCoverAll(a.spec, v.wk.Window, cv.cell.State, ws.Watermark)) && !v.covers(a.spec, ws.Watermark)
			deltaPaths[i] = deltaPathsOf(a, cv, v.listed, need)
			writes += 1 + len(deltaPaths[i])
			if i > 0 && writes > maxTxWrites {
				n = i
				break
			}
			all = append(all, deltaPaths[i]...)
		}
		var ddocs []docstore.Doc
		if len(all) > 0 {
			if ddocs, err = tx.Get(all...); err != nil {
				return err
			}
		}
		var entries []entry
		for i, v := range vs[:n] {
			got := ddocs[:len(deltaPaths[i])]
			ddocs = ddocs[len(deltaPaths[i]):]
			if v.err != nil {
				continue
			}
			cv := cvs[i]
			if err := cv.addDeltas(got); err != nil {
				v.err = err
				continue
			}
			e, err := p.visitCell(tx, a, v, cv, ws, now)
			if err != nil && errors.Is(err, ErrUnreadableState) {
				v.err = err
				continue
			}
			if err != nil {
				return err
			}
			if e != nil {
				entries = append(entries, *e)
			}
		}
		if len(entries) > 0 {
			w, err := p.writeEntries(tx, a.paths.outbox, entries)
			if err != nil {
				return err
			}
			pe = &w
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n, pe, nil
}

// visitCell runs the trigger of v's cell as read (cv) at W ws and writes
// what it decided: the deltas folded in and deleted, the cell written or,
// expired, deleted. It returns the pane's outbox row, for the caller to
// write. A state it cannot add up is an ErrUnreadableState returned before
// anything is written, so the transaction can go on with other cells.
func (p *Processor) visitCell(tx docstore.Tx, a aggregation, v *visit, cv cellView, ws window.WatermarkState, now time.Time) (*entry, error) {
	if !cv.exists && len(cv.deltas) == 0 {
		v.gone = true // expired by a concurrent tick
		return nil, nil
	}
	// The sums and the trigger are pure: their errors (a measure out of
	// range) come back on every retry.
	c, err := cv.content()
	if err != nil {
		return nil, unreadable(err)
	}
	out, err := a.spec.OnTick(v.wk, cv.cell.State, c, ws.Watermark, now)
	if err != nil {
		return nil, unreadable(err)
	}
	var folded window.Shard
	if !out.Expired {
		if folded, err = cv.fold(out.State); err != nil {
			return nil, unreadable(err)
		}
	}
	if cv.exists && out.Pane == nil && !out.Expired && out.State == cv.cell.State {
		// Nothing to emit yet: the deltas stay as they are, and the
		// agenda remembers them and when their delay runs out. Folding
		// them now would write the cell at every tick an order arrives.
		if due := nextDue(a.spec, v.wk, out.State, folded, ws.Watermark, now); !due.IsZero() {
			v.due, v.seen = due, fingerprint(cv.parts)
			return nil, nil
		}
		// Nothing pending (a late cell's notice): fold it away.
	}
	var e *entry
	if out.Pane != nil {
		pe := p.rows.paneEntry(*out.Pane)
		v.pane, e = out.Pane, &pe
	}
	for _, dp := range cv.deltas {
		if err := tx.Delete(dp); err != nil {
			return nil, fmt.Errorf("delete %s: %w", dp, err)
		}
	}
	if out.Expired {
		v.gone = true
		if err := tx.Delete(cv.path); err != nil {
			return nil, fmt.Errorf("delete %s: %w", cv.path, err)
		}
		return e, nil
	}
	v.due = nextDue(a.spec, v.wk, out.State, folded, ws.Watermark, now)
	if cv.exists && len(cv.deltas) == 0 && out.State == cv.cell.State {
		return e, nil
	}
	cv.cell.State, cv.cell.Folded = out.State, folded
	return e, set(tx, cv.path, cv.cell, time.Time{})
}

// relist lists the deltas again for the visits whose pane must cover every
// order accepted before it (ON_TIME, expiry), once the watermark
// transaction has committed W = wm. Every order transaction reads W and
// an order writes a delta of a window only while the W it read is short of
// the window's expiry (on time: short of its end), so the orders that
// read a W short of wm committed before wm was written, and this listing
// sees their deltas. The visit then reads those instead of every delta
// number the cell may use, most of which do not exist: at an ON_TIME round
// or an expiry of a window of many keys, that was most of a tick's reads.
// A delta a late order writes after the listing is left for the next
// visit, as if the order had come just after this tick. A listing that
// fails leaves the visits reading every delta number.
func (p *Processor) relist(ctx context.Context, a aggregation, visits []*visit, wm time.Time) {
	if !slices.ContainsFunc(visits, func(v *visit) bool { return v.all }) {
		return
	}
	fresh, _, err := p.changes(ctx, a)
	if err != nil {
		return
	}
	for _, v := range visits {
		if !v.all {
			continue
		}
		v.fresh, v.listedW, v.listed = true, wm, nil
		if c := fresh[cellID(v.wk)]; c != nil {
			v.listed = c.paths
		}
	}
}

// covers reports whether v's fresh listing holds every delta that the pane
// owed at W wm must cover: the listing came after a W that had reached the
// same timer (the window's expiry, or else its end) as wm.
func (v *visit) covers(s window.Spec, wm time.Time) bool {
	if !v.fresh {
		return false
	}
	if reached(v.listedW, s.ExpiryOf(v.wk.Window)) {
		return true
	}
	return !reached(wm, s.ExpiryOf(v.wk.Window)) && reached(v.listedW, v.wk.Window.End)
}

// mustCoverAll reports whether the trigger at W wm may emit a pane that
// covers every order of the cell accepted so far: the window expires, or
// its ON_TIME pane is owed (which also decides whether the window ever
// held an on-time order).
func mustCoverAll(s window.Spec, w window.Window, st window.PaneState, wm time.Time) bool {
	if reached(wm, s.ExpiryOf(w)) {
		return true
	}
	return reached(wm, w.End) && (st.OnTime == "" || st.OnTime == window.OnTimePending)
}

// nextDue is when the cell's trigger next fires on processing time alone:
// the EARLY (before the end) or LATE delay after its first change not yet
// in a pane; zero when every change is in a pane. The watermark's timers
// (end, expiry) are the window's, in the agenda.
func nextDue(s window.Spec, wk window.WindowKey, st window.PaneState, folded window.Shard, wm, now time.Time) time.Time {
	c, err := window.Combine(st, []window.Shard{folded})
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

// updateAgendas records what the visits found: each cell's next timer,
// cells gone, windows whose ON_TIME round is complete, and drops the
// document of a window with no cell left. One transaction per window
// document, which only ticks write.
func (p *Processor) updateAgendas(ctx context.Context, a aggregation, visits []*visit) error {
	byAgenda := map[string][]*visit{}
	for _, v := range visits {
		byAgenda[v.agenda] = append(byAgenda[v.agenda], v)
	}
	var errs []error
	for _, ap := range slices.Sorted(maps.Keys(byAgenda)) {
		vs := byAgenda[ap]
		err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
			docs, err := tx.Get(ap)
			if err != nil || !docs[0].Exists {
				return err // gone: a concurrent tick expired the window
			}
			var ag agendaDoc
			if err := decodeDoc(docs[0], &ag); err != nil {
				return err
			}
			changed := false
			ok := map[string]bool{}
			// The ON_TIME round is done when every cell of the window was
			// visited in it without an error.
			round, failed := false, false
			for _, v := range vs {
				id := cellID(v.wk)
				if v.err != nil {
					// The window's ON_TIME round stays open: the cell
					// still owes its pane, and is visited again.
					failed = true
					if c, in := ag.Cells[id]; in && errors.Is(v.err, ErrUnreadableState) {
						msg := clip(v.err.Error(), maxCellError)
						if c.FailingSince.IsZero() {
							c.FailingSince = v.since
						}
						if c.Error != msg || !c.FailingSince.Equal(v.since) {
							c.Error = msg
							ag.Cells[id], changed = c, true
						}
					}
					continue
				}
				if v.ran && v.onTime {
					ok[id], round = true, true
				}
				c, in := ag.Cells[id]
				switch {
				case !in:
				case v.gone:
					delete(ag.Cells, id)
					changed = true
				case !c.Due.Equal(v.due) || c.Seen != v.seen || c.Error != "":
					c.Due, c.Seen = v.due, v.seen
					c.Error, c.FailingSince = "", time.Time{} // it recovered
					ag.Cells[id] = c
					changed = true
				}
			}
			if round && !failed && !ag.OnTimeDone {
				done := true
				for id := range ag.Cells {
					done = done && ok[id]
				}
				if done {
					ag.OnTimeDone, changed = true, true
				}
			}
			if len(ag.Cells) == 0 {
				// Cells leave the agenda only when they expire.
				return tx.Delete(ap)
			}
			if !changed {
				return nil
			}
			return set(tx, ap, ag, time.Time{})
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ap, err))
		}
	}
	return errors.Join(errs...)
}

// reached reports wm >= t, treating the zero watermark as minus infinity.
func reached(wm, t time.Time) bool {
	return !wm.IsZero() && !wm.Before(t)
}

func sameWatermark(a, b window.WatermarkState) bool {
	return a.Watermark.Equal(b.Watermark) && a.MaxEventTime.Equal(b.MaxEventTime) && a.LastAccepted.Equal(b.LastAccepted)
}

func (p *Processor) logTick(ctx context.Context, at AggregationTick, err error) {
	attrs := []any{"aggregation", at.Aggregation, "busy", at.Busy,
		"watermark_before", at.WatermarkBefore, "watermark", at.Watermark, "lag_seconds", at.Lag.Seconds(),
		"open_windows", at.OpenWindows, "visited", at.Visited, "panes", len(at.Panes), "expired", at.Expired,
		"flushed", at.Flushed, "pending", at.Pending, "failing_cells", at.FailingCells}
	// One line per failing cell, each carrying failing_cell: the
	// log-based metric alpipe/tick_failing_cells counts them.
	for _, f := range at.Failing {
		fa := []any{"aggregation", f.Aggregation, "failing_cell", f.Path, "window_start", f.WindowStart, "key", f.Key, "error", f.Error}
		if !f.Since.IsZero() {
			fa = append(fa, "failing_since", f.Since)
		}
		p.log.ErrorContext(ctx, "cell failing; the other cells were processed and the next tick retries it", fa...)
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
