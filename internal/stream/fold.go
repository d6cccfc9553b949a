package stream

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

type foldResult struct {
	panes   []window.Pane
	expired int
	visited int
	failing []FailingWindow
	written []pending
}

func (fr *foldResult) add(r foldResult) {
	fr.panes = append(fr.panes, r.panes...)
	fr.expired += r.expired
	fr.visited += r.visited
	fr.failing = append(fr.failing, r.failing...)
	fr.written = append(fr.written, r.written...)
}

// fold adds the plan's elements to their windows (session parts for session
// windows) and runs the trigger of every key of those they touch or whose
// timer is due, at W pl.wm. A catch-up fold takes neither due windows nor
// parked elements.
func (p *Processor) fold(ctx context.Context, pl foldPlan, fd foldDoc) (foldResult, error) {
	parked := false
	for _, e := range fd.Windows {
		parked = parked || e.Parked
	}
	for _, e := range fd.Agenda {
		parked = parked || e.Parked
	}
	if parked && pl.triggers() {
		var err error
		if pl.parked, err = p.listParked(ctx, pl.a); err != nil {
			return foldResult{}, err
		}
	}
	fold := p.foldWindows
	if pl.a.spec.Session() {
		fold = p.foldSessions
	}
	fr, err := fold(ctx, pl, fd)
	fr.sortPanes()
	return fr, err
}

func (fr *foldResult) sortPanes() {
	slices.SortFunc(fr.panes, func(x, y window.Pane) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Index, y.Index))
	})
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

type foldMode int

const (
	foldRecords foldMode = iota // add the records, run the triggers, move Folded from prior to advanced
	// foldDue runs the triggers of due windows only. Session folds never use
	// it: each of their transactions keeps the plan's mode (foldRecords, or
	// foldCatchUp when catching up), and only the last moves Folded.
	foldDue
	foldCatchUp // add the records without triggers (the windows are marked due)
)

type foldPlan struct {
	mode     foldMode
	a        aggregation
	elems    []foldElem  // the records' elements, in acceptance order
	due      []string    // IDs of windows whose timer is due
	parked   []parkedSet // listed before the transaction
	prior    int64       // Folded as the tick read it
	observed int64       // the last generation the advance observed
	advanced int64       // Folded once the records are in
	wm, now  time.Time
}

func (pl foldPlan) records() bool  { return pl.mode != foldDue }
func (pl foldPlan) triggers() bool { return pl.mode != foldCatchUp }

// foldTxn runs one fold transaction: body changes fd and returns the outbox
// rows, written outboxRowsPerDoc a document; final moves Folded past the
// records.
func (p *Processor) foldTxn(ctx context.Context, pl foldPlan, final bool,
	body func(tx docstore.Tx, fd *foldDoc, fr *foldResult) ([]entry, error),
) (foldResult, error) {
	var fr foldResult
	err := p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		fr = foldResult{}
		fd, read, ok, err := pl.begin(tx)
		if err != nil || !ok {
			return err
		}
		entries, err := body(tx, &fd, &fr)
		if err != nil {
			return err
		}
		for k := 0; len(entries) > 0; entries = entries[k:] {
			k = min(len(entries), outboxRowsPerDoc)
			pe, err := p.writeEntries(tx, pl.a.paths.outbox, entries[:k])
			if err != nil {
				return err
			}
			fr.written = append(fr.written, pe)
		}
		return pl.writeFold(tx, fd, read, final)
	})
	if err != nil {
		// Nothing of a transaction that did not commit may reach the
		// warehouse: its panes would carry indexes the next fold reuses.
		return foldResult{}, err
	}
	return fr, nil
}

// begin reads the fold and control documents; ok is false when a
// concurrent tick already did this fold's work.
func (pl foldPlan) begin(tx docstore.Tx) (fd foldDoc, read docstore.Doc, ok bool, err error) {
	fd, ctl, read, err := readFold(tx, pl.a)
	if err != nil {
		return fd, read, false, err
	}
	if pl.records() && fd.Folded != pl.prior {
		return fd, read, false, nil // a concurrent tick folded these
	}
	if pl.triggers() && ctl.Aggs[pl.a.spec.Name].Advanced > pl.advanced {
		// A concurrent tick advanced W again: its fold covers these, at
		// its W; running the triggers at this older W could emit a pane
		// behind one it already wrote.
		return fd, read, false, nil
	}
	if fd.Windows == nil {
		fd.Windows = map[string]windowEntry{}
	}
	if fd.Agenda == nil {
		fd.Agenda = map[int]partEntry{}
	}
	return fd, read, true, nil
}

// readFold reads the fold and control documents. Before the aggregation's
// first fold, fd starts at the first generation that may hold its elements.
func readFold(tx docstore.Tx, a aggregation) (fd foldDoc, ctl controlDoc, read docstore.Doc, err error) {
	docs, err := tx.Get(a.paths.fold, controlPath)
	if err != nil {
		return fd, ctl, read, err
	}
	if err := decodeDoc(docs[0], &fd); err != nil {
		return fd, ctl, read, err
	}
	if err := decodeDoc(docs[1], &ctl); err != nil {
		return fd, ctl, read, err
	}
	if !docs[0].Exists {
		fd.Folded = max(0, ctl.Aggs[a.spec.Name].Since-1)
	}
	return fd, ctl, docs[0], nil
}

// takeParked reads the parked documents at paths as they stand in tx (a
// concurrent tick may have taken them since the listing).
func takeParked(tx docstore.Tx, paths []string) (elems []foldElem, taken []string, err error) {
	if len(paths) == 0 {
		return nil, nil, nil
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range docs {
		if !d.Exists {
			continue
		}
		var pd parkedDoc
		if err := decodeDoc(d, &pd); err != nil {
			return nil, nil, err
		}
		elems = append(elems, pd.Elements...)
		taken = append(taken, d.Path)
	}
	return elems, taken, nil
}

// writeFold writes fd; final moves Folded past the records and keeps the
// times no advance observed.
func (pl foldPlan) writeFold(tx docstore.Tx, fd foldDoc, read docstore.Doc, final bool) error {
	if final && pl.records() {
		fd.Folded = pl.advanced
		if pl.triggers() {
			// The advance observed fd's unseen times and the records up
			// to observed.
			fd.UnseenEvent, fd.UnseenAccepted = time.Time{}, time.Time{}
		}
		for _, e := range pl.elems {
			if !pl.triggers() || e.Gen > pl.observed {
				fd.UnseenEvent, fd.UnseenAccepted = later(fd.UnseenEvent, e.Event), later(fd.UnseenAccepted, e.At)
			}
		}
	}
	return writeIfChanged(tx, pl.a.paths.fold, fd, read)
}

// overflow is the row dead-lettering e's order in aggregation a, whose sum
// at where would leave the range BigQuery stores.
func (p *Processor) overflow(a aggregation, e foldElem, where string, err error) entry {
	return p.rows.discardEntry(overflowRowID(a.spec.Name, e.PedidoID), discard{
		PedidoID: e.PedidoID, Aggregation: a.spec.Name,
		Reason:    fmt.Sprintf("invalid: aggregation %s: %s: %v", a.spec.Name, where, err),
		EventTime: e.Event, WindowStart: e.Window.Start, Watermark: e.Wm,
		ReceivedAt: e.At, MessageID: e.Message,
	})
}

type parkedSet struct {
	path  string
	start time.Time
	elems []foldElem
}

// listParked runs only when the agenda marks some window parked.
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
