package stream

import (
	"cmp"
	"context"
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
func (p *Processor) fold(ctx context.Context, a aggregation, fd foldDoc, elems []foldElem, observed, advanced int64, wm, now time.Time) (foldResult, error) {
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
		r, err := p.foldTx(ctx, a, ce, ids, i == 0, false, parked, fd.Folded, observed, advanced, wm, now)
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
func (p *Processor) foldTx(ctx context.Context, a aggregation, elems []foldElem, ids []string, records, addOnly, anyParked bool, prior, observed, advanced int64, wm, now time.Time) (foldResult, error) {
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
		if records && (fd.Folded != prior || fd.Migrating) {
			return nil // a concurrent tick folded these
		}
		if !addOnly && ctl.Aggs[a.spec.Name].Advanced > advanced {
			// A concurrent tick advanced W again: its fold covers these, at
			// its W; running the triggers at this older W could emit a pane
			// behind one it already wrote.
			return nil
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
		wins := inOrder(visit)
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
		// accepted before anything listed now. The listing came before the
		// transaction, so only those still there are taken, as read here:
		// a concurrent tick may have taken them already.
		var all []foldElem
		var unpark []string
		var pp []string
		for _, pk := range parked {
			if ws := visit[windowID(pk.start)]; ws != nil && ws.keys != nil {
				pp = append(pp, pk.path)
			}
		}
		if len(pp) > 0 {
			pdocs, err := tx.Get(pp...)
			if err != nil {
				return err
			}
			for _, d := range pdocs {
				if !d.Exists {
					continue
				}
				var pd parkedDoc
				if err := decodeDoc(d, &pd); err != nil {
					return err
				}
				all = append(all, pd.Elements...)
				unpark = append(unpark, d.Path)
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
			if !addOnly {
				// The advance observed fd's unseen times and the records
				// up to observed.
				fd.UnseenEvent, fd.UnseenAccepted = time.Time{}, time.Time{}
			}
			for _, e := range elems {
				if addOnly || e.Gen > observed {
					fd.UnseenEvent, fd.UnseenAccepted = later(fd.UnseenEvent, e.Event), later(fd.UnseenAccepted, e.At)
				}
			}
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
	parks := map[string][]foldElem{}
	staged := map[*windowState]map[string]keyState{}
	for _, e := range rec {
		id := windowID(e.Window.Start)
		ws := visit[id]
		if ws.keys == nil {
			parks[id] = append(parks[id], e)
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
	for id, es := range parks {
		park[id] = append(park[id], es...)
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
