package stream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// windowsPerTx bounds the due windows one fold transaction rewrites beyond
// those the records touch, keeping it far from Firestore's 10 MiB.
const windowsPerTx = 8

// foldWindows: one transaction for the records (with up to windowsPerTx due
// windows), then one per windowsPerTx further due windows.
func (p *Processor) foldWindows(ctx context.Context, pl foldPlan, fd foldDoc) (foldResult, error) {
	touched := map[string]bool{}
	for _, e := range pl.elems {
		touched[windowID(e.Window.Start)] = true
	}
	var due []string
	for _, id := range slices.Sorted(maps.Keys(fd.Windows)) {
		if !touched[id] && pl.triggers() && isDue(pl.a.spec, fd.Windows[id], pl.wm, pl.now) {
			due = append(due, id)
		}
	}
	var fr foldResult
	first := min(len(due), max(0, windowsPerTx-len(touched)))
	pl.due = due[:first]
	for rest := due[first:]; ; rest = rest[min(len(rest), windowsPerTx):] {
		r, err := p.foldTx(ctx, pl)
		fr.add(r)
		if err != nil || len(rest) == 0 {
			return fr, err
		}
		pl.mode, pl.elems, pl.due = foldDue, nil, rest[:min(len(rest), windowsPerTx)]
	}
}

// isDue reports whether a window needs the trigger without new elements.
func isDue(s window.Spec, e windowEntry, wm, now time.Time) bool {
	w := e.window()
	return (!e.Due.IsZero() && !now.Before(e.Due)) ||
		(reached(wm, w.End) && !e.OnTimeDone) ||
		reached(wm, s.ExpiryOf(w)) ||
		e.Error != "" || e.Parked
}

// foldTx is one fold transaction of windows. A window whose state cannot be
// read is reported and its elements are parked, so the others go on.
func (p *Processor) foldTx(ctx context.Context, pl foldPlan) (foldResult, error) {
	body := func(tx docstore.Tx, fd *foldDoc, fr *foldResult) ([]entry, error) {
		visit, err := pl.loadWindows(tx, *fd)
		if err != nil {
			return nil, err
		}
		all, unpark, err := pl.unpark(tx, visit)
		if err != nil {
			return nil, err
		}
		entries, park := p.addRecords(pl.a, visit, all)
		gone, es, err := p.runTriggers(pl, visit, fr)
		if err != nil {
			return nil, err
		}
		if err := pl.writeState(tx, fd, visit, park, gone, fr); err != nil {
			return nil, err
		}
		return append(entries, es...), deleteAll(tx, unpark)
	}
	return p.foldTxn(ctx, pl, true, body)
}

// loadWindows reads the state of the due windows and of those the records
// touch, by window ID. A window whose state cannot be read has keys nil and
// its error in its entry.
func (pl foldPlan) loadWindows(tx docstore.Tx, fd foldDoc) (map[string]*windowState, error) {
	visit := map[string]*windowState{}
	for _, id := range pl.due {
		if e, ok := fd.Windows[id]; ok {
			visit[id] = &windowState{entry: e}
		}
	}
	for _, e := range pl.elems {
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
	return visit, readWindows(tx, pl.a, visit, pl.now)
}

// unpark returns the elements to add: the parked ones of the windows
// readable again first (they were accepted before anything listed now),
// then the records'; and the parked documents taken.
func (pl foldPlan) unpark(tx docstore.Tx, visit map[string]*windowState) ([]foldElem, []string, error) {
	var paths []string
	for _, pk := range pl.parked {
		if ws := visit[windowID(pk.start)]; ws != nil && ws.keys != nil {
			paths = append(paths, pk.path)
		}
	}
	all, taken, err := takeParked(tx, paths)
	return append(all, pl.elems...), taken, err
}

// addRecords adds the elements, one order's at a time; it returns the rows
// of the orders refused and, by window ID, the elements to park.
func (p *Processor) addRecords(a aggregation, visit map[string]*windowState, all []foldElem) ([]entry, map[string][]foldElem) {
	var entries []entry
	park := map[string][]foldElem{}
	for from := 0; from < len(all); {
		to := from + 1
		for to < len(all) && all[to].PedidoID == all[from].PedidoID && all[to].At.Equal(all[from].At) {
			to++
		}
		if e, ok := p.addRecord(a, visit, all[from:to], park); !ok {
			entries = append(entries, e)
		}
		from = to
	}
	return entries, park
}

// runTriggers returns the windows whose every key expired and the panes'
// outbox rows.
func (p *Processor) runTriggers(pl foldPlan, visit map[string]*windowState, fr *foldResult) (map[string]bool, []entry, error) {
	gone := map[string]bool{}
	var entries []entry
	for _, id := range slices.Sorted(maps.Keys(visit)) {
		ws := visit[id]
		if ws.keys == nil {
			continue
		}
		if !pl.triggers() {
			// The triggers run once the fold has caught up; parked
			// elements are taken then too (Parked stays).
			ws.entry.Due = pl.now
			continue
		}
		es, g, err := p.trigger(pl.a, ws, pl.wm, pl.now, fr)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, es...)
		gone[id] = g
	}
	return gone, entries, nil
}

// writeState writes the visited windows' state and their agenda entries.
func (pl foldPlan) writeState(tx docstore.Tx, fd *foldDoc, visit map[string]*windowState, park map[string][]foldElem, gone map[string]bool, fr *foldResult) error {
	a := pl.a
	for _, id := range slices.Sorted(maps.Keys(visit)) {
		ws := visit[id]
		switch {
		case ws.keys == nil:
			fr.failing = append(fr.failing, a.failingWindow(ws.entry))
			if len(park[id]) > 0 {
				ws.entry.Parked = true
				if err := set(tx, a.paths.parkedOf(ws.entry.Start, pl.advanced), parkedDoc{Elements: park[id]}, time.Time{}); err != nil {
					return err
				}
			}
			fd.Windows[id] = ws.entry
			continue
		case gone[id]:
			if err := deleteAll(tx, partPaths(a, ws.entry)); err != nil {
				return err
			}
			delete(fd.Windows, id)
			continue
		}
		ws.entry.Error, ws.entry.FailingSince = "", time.Time{}
		if pl.triggers() {
			ws.entry.Parked = false
		}
		if err := writeWindow(tx, a, ws); err != nil {
			return err
		}
		fd.Windows[id] = ws.entry
	}
	return nil
}

// addRecord adds one order's elements. When one of them would take its
// key's total out of the range BigQuery stores, none is added and the row
// dead-lettering the order in this aggregation is returned (ok false).
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
		if staged[ws] == nil {
			staged[ws] = map[string]keyState{}
		}
		ks, ok := staged[ws][e.Key]
		if !ok {
			ks = ws.keys[e.Key]
		}
		sum, err := a.spec.Accept(ks.Sum, ks.State, e.order(), e.Wm, e.At)
		if err != nil {
			where := fmt.Sprintf("window %s key %q", e.Window.Start.Format(time.RFC3339), e.Key)
			return p.overflow(a, e, where, err), false
		}
		ks.Sum = sum
		staged[ws][e.Key] = ks
		changes = append(changes, change{ws: ws, key: e.Key, ks: ks})
	}
	for _, c := range changes {
		c.ws.keys[c.key] = c.ks
	}
	for id, es := range parks {
		park[id] = append(park[id], es...)
	}
	return entry{}, true
}

// trigger runs OnTick for every key of a window; gone: every key expired.
func (p *Processor) trigger(a aggregation, ws *windowState, wm, now time.Time, fr *foldResult) ([]entry, bool, error) {
	w := ws.entry.window()
	var entries []entry
	var next time.Time
	for _, k := range slices.Sorted(maps.Keys(ws.keys)) {
		ks := ws.keys[k]
		wk := window.WindowKey{Window: w, Key: k}
		fr.visited++
		c, err := window.Combine(ks.State, []window.Partial{ks.Sum})
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
			if ks.Sum, err = window.Combine(out.State, []window.Partial{ks.Sum}); err != nil {
				return nil, false, err
			}
		}
		if out.Expired {
			delete(ws.keys, k)
			fr.expired++
			continue
		}
		ks.State = out.State
		ws.keys[k] = ks
		next = earliest(next, a.spec.NextDue(w, ks.State, ks.Sum, wm, now))
	}
	ws.entry.Due = next
	ws.entry.OnTimeDone = reached(wm, w.End)
	return entries, len(ws.keys) == 0, nil
}
