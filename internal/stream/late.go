package stream

import (
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// readLate reads, for the late windows wanted, the aggregation's fold
// document (once) and the windows' state.
func (p *Processor) readLate(tx docstore.Tx, rd *orderRead, wants []want) error {
	var paths []string
	for ai, a := range p.aggs {
		if !rd.readLt[ai] && slices.ContainsFunc(wants, func(w want) bool { return w.agg == ai }) {
			paths = append(paths, a.paths.foldPath())
		}
	}
	if len(paths) > 0 {
		docs, err := tx.Get(paths...)
		if err != nil {
			return err
		}
		i := 0
		for ai := range p.aggs {
			if rd.readLt[ai] || !slices.ContainsFunc(wants, func(w want) bool { return w.agg == ai }) {
				continue
			}
			d := docs[i]
			i++
			rd.readLt[ai] = true
			if !d.Exists {
				continue // nothing folded yet: the fold emits the correction
			}
			if err := decodeDoc(d, &rd.folds[ai]); err != nil {
				return err
			}
			ac := rd.ctl.Aggs[p.aggs[ai].spec.Name]
			rd.lateOK[ai] = !rd.folds[ai].Migrating && rd.folds[ai].Folded >= ac.Advanced
		}
	}
	byAgg := make([][]*windowState, len(p.aggs))
	for _, w := range wants {
		a := p.aggs[w.agg]
		if _, ok := rd.late[w.agg][w.start]; ok {
			continue
		}
		ws := &windowState{}
		rd.late[w.agg][w.start] = ws
		if !rd.lateOK[w.agg] {
			continue
		}
		e, ok := rd.folds[w.agg].Windows[windowID(w.start)]
		if !ok {
			e = windowEntry{Start: w.start, End: w.start.Add(a.spec.WindowSize), Parts: 1}
		}
		if e.Error != "" || e.Parked {
			// Its state cannot be read: the fold parks the element.
			ws.entry.Error = "failing"
			continue
		}
		ws.entry = e
		byAgg[w.agg] = append(byAgg[w.agg], ws)
	}
	for ai, ws := range byAgg {
		if len(ws) == 0 {
			continue
		}
		bad, err := readWindows(tx, p.aggs[ai], ws)
		if err != nil {
			return err
		}
		for w, err := range bad {
			// The fold parks the element and reports the window, rather
			// than this batch failing until the window expires and its
			// late orders turn too late.
			w.entry.Error = clip(err.Error(), maxCellError)
		}
	}
	return nil
}

// applyLate emits the correction of a late element (Ld = 0) with its
// order: it adds the element to its window's state as read and runs the
// trigger. When the window's state is not read yet it asks for it (wants);
// when the aggregation's fold is behind the watermark (an advance not yet
// folded: the correction must cover orders the fold has not added) or the
// window's state cannot be read, the element goes to the fold like any
// other, which emits the correction at the next tick (applied false).
func (pl *aggPlan) applyLate(s window.Spec, ai int, rd orderRead, e element, it *item, wm time.Time, writes, bytes *int) (*window.Pane, bool, error) {
	start := e.wk.Window.Start
	ws, ok := pl.late[start]
	if !ok {
		read, ok := rd.late[ai][start]
		if !ok {
			pl.wants = append(pl.wants, start)
			return nil, false, nil
		}
		if !rd.lateOK[ai] || read.entry.Error != "" {
			return nil, false, nil
		}
		ws = &windowState{entry: read.entry, keys: maps.Clone(read.keys), read: read.read}
		if ws.keys == nil {
			ws.keys = map[string]keyState{}
		}
		pl.late[start] = ws
		*writes += max(1, ws.entry.Parts)
		*bytes += docOverhead * max(1, ws.entry.Parts)
	}
	ks := ws.keys[e.wk.Key]
	o := window.Order{ID: it.o.PedidoID, Key: e.wk.Key, EventTime: it.o.EventTime, Measures: e.ms, Window: e.wk.Window}
	sum, err := s.Accept(ks.Sum, ks.State, o, wm, it.now)
	if err != nil {
		return nil, false, err
	}
	c, err := window.Combine(ks.State, []window.Shard{sum})
	if err != nil {
		return nil, false, err
	}
	out, err := s.OnLateOrder(e.wk, ks.State, c, wm, it.now)
	if err != nil {
		return nil, false, err
	}
	if out.Pane != nil {
		if sum, err = fold(out.State, sum); err != nil {
			return nil, false, err
		}
	}
	ws.keys[e.wk.Key] = keyState{State: out.State, Sum: sum}
	ws.dirty = true
	return out.Pane, true, nil
}
