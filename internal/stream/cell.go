package stream

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/numeric"
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
	return p.readCellFor(tx, a, wk, listed, func(cellDoc) bool { return all })
}

// readCellFor is readCell deciding all from the cell as read, in the same
// transaction: whether a pane must cover every delta depends on the cell's
// pane state, which only this read knows for sure.
func (p *Processor) readCellFor(tx docstore.Tx, a aggregation, wk window.WindowKey, listed []string, needAll func(cellDoc) bool) (cellView, error) {
	docs, err := tx.Get(a.paths.cell(wk))
	if err != nil {
		return cellView{wk: wk, path: a.paths.cell(wk)}, err
	}
	v, err := cellOf(a, wk, docs[0])
	if err != nil {
		return v, err
	}
	paths := deltaPathsOf(a, v, listed, needAll(v.cell))
	if len(paths) == 0 {
		return v, nil
	}
	ddocs, err := tx.Get(paths...)
	if err != nil {
		return v, err
	}
	return v, v.addDeltas(ddocs)
}

// cellOf decodes the cell document d of wk (its defaults when missing).
func cellOf(a aggregation, wk window.WindowKey, d docstore.Doc) (cellView, error) {
	v := cellView{wk: wk, path: a.paths.cell(wk), exists: d.Exists}
	v.cell = cellDoc{WindowStart: wk.Window.Start, WindowEnd: wk.Window.End, Key: wk.Key, Shards: a.spec.Shards}
	if err := decodeDoc(d, &v.cell); err != nil {
		return v, err
	}
	if v.cell.Shards < 1 || v.cell.Shards > window.MaxShards {
		return v, unreadable(fmt.Errorf("%s: shard count %d out of range", v.path, v.cell.Shards))
	}
	return v, nil
}

// deltaPathsOf are the deltas to read with cell v: those listed, and when
// all is set every delta number the cell may use.
func deltaPathsOf(a aggregation, v cellView, listed []string, all bool) []string {
	if !all {
		return listed
	}
	seen := map[string]bool{}
	var paths []string
	for n := range max(v.cell.Shards, a.spec.Shards) {
		paths = append(paths, a.paths.delta(v.wk, n))
		seen[paths[n]] = true
	}
	for _, l := range listed {
		if !seen[l] {
			paths = append(paths, l)
		}
	}
	return paths
}

// addDeltas adds the delta documents read (ddocs) to v.
func (v *cellView) addDeltas(ddocs []docstore.Doc) error {
	for _, d := range ddocs {
		if !d.Exists {
			continue
		}
		var dd deltaDoc
		if err := decodeDoc(d, &dd); err != nil {
			return err
		}
		part := dd.Part
		part.Epoch = v.cell.State.NextIndex
		v.deltas = append(v.deltas, d.Path)
		v.parts = append(v.parts, part)
		v.cell.Shards = max(v.cell.Shards, dd.N+1)
	}
	return nil
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

// The headroom check: no order is accepted whose window total would leave
// the range BigQuery stores (NUMERIC for importe, INT64 for the counts),
// so that the tick, which adds a cell's parts up, never meets a sum it
// cannot hold (the poison cell of an unsummable window).
//
// The total of a cell is its Folded sums plus every delta, and an on-time
// order reads only its own delta: reading every delta of a hot cell in
// every order would make concurrent batches conflict on each other's
// deltas. So the check is a bound most orders pass at no cost beyond one
// more document read (the cell, which only ticks and late orders write),
// and an exact sum for the few that do not:
//
//   - fast: the cell is not marked Exact, its Folded sums are at most half
//     of each range, and the order's delta after adding it is at most
//     1/(2*MaxShards) of each range. While no cell is marked, every delta
//     was written under that bound, so the total of Folded and at most
//     MaxShards deltas is within range: half plus MaxShards shares.
//   - exact: otherwise the transaction reads the cell with every delta
//     number it may use (at most MaxShards documents), adds them up
//     exactly, and refuses the order that would take the total out of
//     range. It marks the cell Exact, since its delta may now pass the
//     share that the fast bound assumes of every delta: from then on every
//     order of that cell takes the exact path (the mark stays until the
//     cell expires).
//
// Measures of accepted orders are never negative (order.Parse refuses
// negative amounts and quantities), so a cell's sums only grow, every
// partial sum the tick makes is at most the total, and Folded never shrinks
// below the half that sent orders to the exact path. The fast bound is
// reached only by cells past 10^26 in one delta or 5*10^28 in all,
// which no shop's hour makes: the exact path is a guard, not a cost.
var (
	cellHalf   = fractionOfRange(2)
	deltaShare = fractionOfRange(2 * window.MaxShards)
)

// fractionOfRange is the largest value of each measure divided by k.
func fractionOfRange(k int64) window.Measures {
	n := numeric.Max().BigNanos()
	d, err := numeric.FromBigNanos(n.Quo(n, big.NewInt(k)))
	if err != nil {
		panic(err) // smaller than Max
	}
	return window.Measures{Importe: d, Pedidos: math.MaxInt64 / k, Unidades: math.MaxInt64 / k}
}

// within reports whether every measure of m is within ±lim.
func within(m, lim window.Measures) bool {
	return m.Importe.Cmp(lim.Importe) <= 0 && m.Importe.Cmp(lim.Importe.Neg()) >= 0 &&
		m.Pedidos <= lim.Pedidos && m.Pedidos >= -lim.Pedidos &&
		m.Unidades <= lim.Unidades && m.Unidades >= -lim.Unidades
}

// headroom checks that g's cell, with g.delta as it now stands, totals
// within range. want: the exact check needs the cell read in full (into
// full) first. An error wraps window.ErrOverflow: the last order added to
// g.delta must be refused.
func headroom(g *cellGroup, full map[window.WindowKey]cellView) (want bool, err error) {
	if g.cellErr != nil {
		// A cell that does not decode stops its tick, which reports it;
		// its orders wait in deltas for the repair under the delta bound
		// alone, and beyond it fail (Pub/Sub redelivers) rather than be
		// refused for a state no order caused.
		if within(g.delta.Measures, deltaShare) {
			return false, nil
		}
		return false, g.cellErr
	}
	if !g.cell.Exact && !g.exact && within(g.cell.Folded.Measures, cellHalf) && within(g.delta.Measures, deltaShare) {
		return false, nil
	}
	v, ok := full[g.wk]
	if !ok {
		return true, nil
	}
	total, err := g.delta.Measures.Add(v.cell.Folded.Measures)
	for i := 0; err == nil && i < len(v.deltas); i++ {
		if v.deltas[i] != g.deltaPath {
			total, err = total.Add(v.parts[i].Measures)
		}
	}
	if err != nil {
		return false, fmt.Errorf("its total would leave the range BigQuery stores: %w", err)
	}
	g.exact = true
	return false, nil
}
