package windowtest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// maxProblems caps the problems a check reports: the first few tell the story.
const maxProblems = 20

type problems []error

func (p *problems) addf(format string, args ...any) {
	if len(*p) < maxProblems {
		*p = append(*p, fmt.Errorf(format, args...))
	}
}

func (p problems) err() error { return errors.Join(p...) }

// SortPanes orders panes by identity: aggregation, window start, key, index.
func SortPanes(ps []window.Pane) {
	slices.SortFunc(ps, func(a, b window.Pane) int {
		return cmp.Or(
			cmp.Compare(a.Aggregation, b.Aggregation),
			a.WindowStart.Compare(b.WindowStart),
			cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Index, b.Index),
		)
	})
}

// View is what the dashboard shows for panes: per identity (window start,
// key) the latest pane when accumulating, the sum of the panes when
// discarding (each pane's own Accumulation decides), under the window end
// of its latest pane (a session's end moves); an identity whose latest pane
// is MERGED is left out. It fails on a sum that overflows.
func View(panes []window.Pane) (map[window.WindowKey]window.Measures, error) {
	ps := slices.Clone(panes)
	SortPanes(ps)
	type ident struct {
		start int64
		key   string
	}
	latest := map[ident]window.Pane{}
	sums := map[ident]window.Measures{}
	for _, p := range ps {
		id := ident{p.WindowStart.UnixNano(), p.Key}
		latest[id] = p // sorted by index: the last one wins
		if p.Accumulation != window.Discarding {
			sums[id] = p.Measures
			continue
		}
		s, err := sums[id].Add(p.Measures)
		if err != nil {
			return nil, fmt.Errorf("view of pane %s: %w", p.ID(), err)
		}
		sums[id] = s
	}
	out := map[window.WindowKey]window.Measures{}
	for id, p := range latest {
		if p.Timing != window.TimingMerged {
			out[normalKey(p.WindowKey())] = sums[id]
		}
	}
	return out, nil
}

// CheckWatermark checks invariant 5 for one tick at processing time now that
// moved the watermark from prev to got: W never decreases and is never ahead
// of now - D.
func CheckWatermark(spec window.Spec, prev, got, now time.Time) error {
	var p problems
	if got.Before(prev) {
		p.addf("tick at %s: watermark went back from %s to %s", now, prev, got)
	}
	if got.After(now.Add(-spec.OutOfOrderness)) {
		p.addf("tick at %s: watermark %s is ahead of now - D = %s", now, got, now.Add(-spec.OutOfOrderness))
	}
	return p.err()
}

// CheckPanes checks the panes an implementation recorded for the events the
// model has seen, without assuming when exactly each pane fired:
//
//   - identical rewrites of a pane are harmless; two different panes with one
//     identity are not;
//   - every pane belongs to a (window, key) holding accepted orders, with the
//     spec's aggregation name, window alignment and accumulation mode;
//   - per (window, key): indexes contiguous from 0, timings EARLY* ON_TIME?
//     LATE*, one ON_TIME pane iff the model's window held orders when W
//     reached its end, no EARLY pane at W >= end, no LATE pane at W < end;
//   - accumulating panes never shrink; every window the model emitted for
//     has panes, and none the model did not;
//   - once the model is Settled, the view of the panes equals Final
//     (invariant 1).
func (m *Model) CheckPanes(panes []window.Pane) error { return m.a.checkPanes(panes) }

func (a *agg) checkPanes(panes []window.Pane) error {
	if a.spec.Session() {
		return a.checkSessionPanes(panes)
	}
	var p problems
	byID := map[string]window.Pane{}
	cells := map[window.WindowKey][]window.Pane{}
	for _, pn := range panes {
		if prev, ok := byID[pn.ID()]; ok {
			if !samePane(prev, pn) {
				p.addf("pane %s written twice with different content: %+v and %+v", pn.ID(), prev, pn)
			}
			continue
		}
		byID[pn.ID()] = pn
		wk := normalKey(pn.WindowKey())
		cells[wk] = append(cells[wk], pn)
	}

	for wk, ps := range cells {
		slices.SortFunc(ps, func(a, b window.Pane) int { return cmp.Compare(a.Index, b.Index) })
		c := a.cells[cellID{wk.Window.Start.Unix(), wk.Key}]
		name := fmt.Sprintf("%s key %q", wk.Window.Start.Format(time.RFC3339), wk.Key)
		if c == nil || !c.start.Equal(wk.Window.Start) {
			p.addf("window %s: %d panes but no accepted order", name, len(ps))
			continue
		}
		if !c.end.Equal(wk.Window.End) {
			p.addf("window %s: end %s, want %s", name, wk.Window.End, c.end)
		}
		onTime := 0
		stage := 0 // 0 early, 1 on time, 2 late
		for i, pn := range ps {
			if pn.Index != int64(i) {
				p.addf("window %s: pane indexes %v are not contiguous from 0", name, indexes(ps))
				break
			}
			if pn.Aggregation != a.spec.Name || pn.Accumulation != a.spec.Accumulation {
				p.addf("pane %s: aggregation %q mode %s, want %q %s", pn.ID(), pn.Aggregation, pn.Accumulation, a.spec.Name, a.spec.Accumulation)
			}
			atEnd := !pn.Watermark.IsZero() && !pn.Watermark.Before(c.end)
			s := 0
			switch pn.Timing {
			case window.TimingEarly:
				if atEnd {
					p.addf("pane %s: EARLY at watermark %s >= end %s", pn.ID(), pn.Watermark, c.end)
				}
			case window.TimingOnTime:
				s = 1
				onTime++
				if !atEnd {
					p.addf("pane %s: ON_TIME at watermark %s < end %s", pn.ID(), pn.Watermark, c.end)
				}
			case window.TimingLate:
				s = 2
				if !atEnd {
					p.addf("pane %s: LATE at watermark %s < end %s", pn.ID(), pn.Watermark, c.end)
				}
			default:
				p.addf("pane %s: unknown timing %q", pn.ID(), pn.Timing)
			}
			if s < stage || (s == 1 && stage == 1) {
				p.addf("window %s: timings %v are not EARLY* ON_TIME? LATE*", name, timings(ps))
			}
			stage = max(stage, s)
			if i > 0 && a.spec.Accumulation == window.Accumulating && pn.Measures.Pedidos < ps[i-1].Measures.Pedidos {
				p.addf("pane %s: accumulating pane has %d pedidos, fewer than the previous %d", pn.ID(), pn.Measures.Pedidos, ps[i-1].Measures.Pedidos)
			}
		}
		if want := btoi(c.onTimeDone); onTime != want {
			p.addf("window %s: %d ON_TIME panes, want %d", name, onTime, want)
		}
	}
	for _, c := range a.sortedCells() {
		if c.next > 0 && len(cells[c.windowKey()]) == 0 {
			p.addf("window %s key %q: no pane, the model emitted %d", c.start.Format(time.RFC3339), c.key, c.next)
		}
	}

	if a.settled() {
		view, err := View(slices.Collect(maps.Values(byID)))
		if err != nil {
			p.addf("%v", err)
		}
		for wk, want := range a.final() {
			if got := view[wk]; got != want {
				p.addf("window %s key %q: final value %+v, want the sum of its accepted orders %+v",
					wk.Window.Start.Format(time.RFC3339), wk.Key, got, want)
			}
		}
	}
	return p.err()
}

// CheckDrops checks invariant 3 on the drops an implementation recorded:
// exactly the model's too-late orders, each with its window and a watermark
// at or past end + L.
func (m *Model) CheckDrops(drops []Drop) error {
	var p problems
	want := map[string]Drop{}
	for _, d := range m.a.drops {
		want[d.PedidoID] = d
	}
	got := map[string]bool{}
	for _, d := range drops {
		if got[d.PedidoID] {
			continue // a rewrite of the same drop
		}
		got[d.PedidoID] = true
		w, ok := want[d.PedidoID]
		if !ok {
			p.addf("order %s dropped; the model %s", d.PedidoID, m.describe(d.PedidoID))
			continue
		}
		if !d.WindowStart.Equal(w.WindowStart) {
			p.addf("order %s dropped with window %s, want %s", d.PedidoID, d.WindowStart, w.WindowStart)
		}
		if end := d.WindowStart.Add(m.a.spec.WindowSize + m.a.spec.AllowedLateness); d.Watermark.Before(end) {
			p.addf("order %s dropped at watermark %s, before end + L = %s", d.PedidoID, d.Watermark, end)
		}
	}
	for id := range want {
		if !got[id] {
			p.addf("order %s was not dropped; the model dropped it", id)
		}
	}
	return p.err()
}

// CheckFates checks invariant 2: every distinct valid order has exactly the
// model's fate.
func (m *Model) CheckFates(fates map[string]Fate) error {
	var p problems
	for _, id := range sortedKeys(m.fates) {
		if got := fates[id]; got != m.fates[id] {
			p.addf("order %s is %q, want %q", id, got, m.fates[id])
		}
	}
	for _, id := range sortedKeys(fates) {
		if _, ok := m.fates[id]; !ok {
			p.addf("order %s is %q but was never delivered valid", id, fates[id])
		}
	}
	return p.err()
}

func (m *Model) describe(id string) string {
	if f, ok := m.fates[id]; ok {
		return "says it was " + string(f)
	}
	return "never saw it"
}

// samePane compares panes by value; times by instant.
func samePane(a, b window.Pane) bool {
	return a.Aggregation == b.Aggregation && a.Key == b.Key &&
		a.WindowStart.Equal(b.WindowStart) && a.WindowEnd.Equal(b.WindowEnd) &&
		a.Index == b.Index && a.Timing == b.Timing && a.Accumulation == b.Accumulation &&
		a.Measures == b.Measures && a.Watermark.Equal(b.Watermark) && a.EmittedAt.Equal(b.EmittedAt) &&
		a.MergedInto.Equal(b.MergedInto)
}

// normalKey makes window times comparable with == whatever their location.
func normalKey(wk window.WindowKey) window.WindowKey {
	wk.Window.Start = normalTime(wk.Window.Start)
	wk.Window.End = normalTime(wk.Window.End)
	return wk
}

func normalTime(t time.Time) time.Time {
	return time.Unix(t.Unix(), int64(t.Nanosecond())).UTC()
}

func indexes(ps []window.Pane) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.Index
	}
	return out
}

func timings(ps []window.Pane) []window.Timing {
	out := make([]window.Timing, len(ps))
	for i, p := range ps {
		out[i] = p.Timing
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
