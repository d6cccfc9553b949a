package stream

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// cellView is a cell and the deltas read with it in one transaction: the
// one way this package reads a (window, key)'s state, for the tick and for
// a late order that emits its correction pane.
type cellView struct {
	wk     window.WindowKey
	path   string
	exists bool // the cell document exists (the tick created it)
	cell   cellDoc
	// deltas are the paths of the deltas that exist, parts their sums with
	// the pending mark made valid against cell.State: a delta that exists
	// is a change no pane covers.
	deltas []string
	parts  []window.Shard
}

// readCell reads the cell of wk and its deltas: those at listed, and when
// all is set every delta number the cell may use (so that nothing accepted
// before this transaction escapes it: the ON_TIME pane, expiry, a late
// correction).
func (p *Processor) readCell(tx docstore.Tx, a aggregation, wk window.WindowKey, listed []string, all bool) (cellView, error) {
	v := cellView{wk: wk, path: a.paths.cell(wk)}
	docs, err := tx.Get(v.path)
	if err != nil {
		return v, err
	}
	v.exists = docs[0].Exists
	v.cell = cellDoc{WindowStart: wk.Window.Start, WindowEnd: wk.Window.End, Key: wk.Key, Shards: a.spec.Shards}
	if err := decodeDoc(docs[0], &v.cell); err != nil {
		return v, err
	}
	if v.cell.Shards < 1 || v.cell.Shards > window.MaxShards {
		return v, unreadable(fmt.Errorf("%s: shard count %d out of range", v.path, v.cell.Shards))
	}
	paths := listed
	if all {
		seen := map[string]bool{}
		paths = nil
		for n := range max(v.cell.Shards, a.spec.Shards) {
			paths = append(paths, a.paths.delta(wk, n))
			seen[paths[n]] = true
		}
		for _, l := range listed {
			if !seen[l] {
				paths = append(paths, l)
			}
		}
	}
	if len(paths) == 0 {
		return v, nil
	}
	ddocs, err := tx.Get(paths...)
	if err != nil {
		return v, err
	}
	for _, d := range ddocs {
		if !d.Exists {
			continue
		}
		var dd deltaDoc
		if err := decodeDoc(d, &dd); err != nil {
			return v, err
		}
		part := dd.Part
		part.Epoch = v.cell.State.NextIndex
		v.deltas = append(v.deltas, d.Path)
		v.parts = append(v.parts, part)
		v.cell.Shards = max(v.cell.Shards, dd.N+1)
	}
	return v, nil
}

// content adds up the cell for its trigger.
func (v cellView) content() (window.Content, error) {
	c, err := window.Combine(v.cell.State, append([]window.Shard{v.cell.Folded}, v.parts...))
	if err != nil {
		return window.Content{}, fmt.Errorf("%s: %w", v.path, err)
	}
	return c, nil
}

// fold merges the cell's deltas into Folded as of the new pane state st:
// after a pane, nothing read is pending any more.
func (v cellView) fold(st window.PaneState) (window.Shard, error) {
	f, err := fold(st, append([]window.Shard{v.cell.Folded}, v.parts...)...)
	if err != nil {
		return window.Shard{}, fmt.Errorf("%s: %w", v.path, err)
	}
	return f, nil
}

// fold merges parts into one shard as of pane state st: measures add up,
// flags and times keep their extremes, and the earliest pending mark that
// is still pending against st survives.
func fold(st window.PaneState, parts ...window.Shard) (window.Shard, error) {
	c, err := window.Combine(st, parts)
	if err != nil {
		return window.Shard{}, err
	}
	return window.Shard{Measures: c.Total, OnTime: c.OnTime, Epoch: st.NextIndex, PendingSince: c.FirstPending,
		MaxEventTime: c.MaxEventTime, LastAccepted: c.LastAccepted}, nil
}

// newest returns the latest event time and acceptance time in parts.
func newest(parts ...window.Shard) (maxEvent, last time.Time) {
	for _, s := range parts {
		if s.MaxEventTime.After(maxEvent) {
			maxEvent = s.MaxEventTime
		}
		if s.LastAccepted.After(last) {
			last = s.LastAccepted
		}
	}
	return maxEvent, last
}
