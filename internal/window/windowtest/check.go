package windowtest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/window"
)

// problems are what a check found; the first 20 tell the story.
type problems []error

func (p *problems) addf(format string, args ...any) {
	if len(*p) < 20 {
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
	latest := map[ident]window.Pane{}
	sums := map[ident]window.Measures{}
	for _, p := range ps {
		id := ident{normalTime(p.WindowStart), p.Key}
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
			out[window.WindowKey{Window: window.Window{Start: id.start, End: normalTime(p.WindowEnd)}, Key: p.Key}] = sums[id]
		}
	}
	return out, nil
}

// ident is a pane identity less the aggregation and index, its start
// normalised (normalTime) so that it compares with == whatever its location.
type ident struct {
	start time.Time
	key   string
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

// CheckPanes checks the panes an implementation recorded for aggregation
// name for the events the model has seen, without assuming when exactly each pane fired:
//
//   - identical rewrites of a pane are harmless; two different panes with one
//     identity are not;
//   - every pane has the spec's aggregation name and accumulation mode; with
//     fixed or sliding windows it belongs to a (window, key) holding accepted
//     orders, with the model's window end;
//   - per identity (window start, key): indexes contiguous from 0, timings
//     EARLY* ON_TIME? LATE* MERGED? (MERGED for sessions only, naming an
//     earlier start), no EARLY pane at W >= end, no ON_TIME pane at W < end;
//     with fixed or sliding windows no LATE pane at W < end and one ON_TIME
//     pane iff the model's window held orders when W reached its end;
//   - accumulating panes never shrink; every window the model emitted for
//     has panes;
//   - once the model is Settled, the view of the panes shows exactly Final
//     (invariant 1; for sessions invariant 7: the sessions partition each
//     key's accepted orders).
func (m *Multi) CheckPanes(name string, panes []window.Pane) error {
	return m.agg(name).checkPanes(panes, true)
}

// CheckSequences checks, without a model, what CheckPanes checks of each
// identity's panes alone (rewrites, aggregation and mode, indexes, timings
// and their watermarks, accumulating panes never shrinking), for a system
// whose timing no model can predict.
func CheckSequences(spec window.Spec, panes []window.Pane) error {
	return newAgg(spec).checkPanes(panes, false)
}

// checkPanes checks panes against the model's cells when modelled.
func (a *agg) checkPanes(panes []window.Pane, modelled bool) error {
	var p problems
	sess := a.spec.Session()
	byID := map[string]window.Pane{}
	idents := map[ident][]window.Pane{}
	for _, pn := range panes {
		if prev, ok := byID[pn.ID()]; ok {
			if !gocmp.Equal(prev, pn) {
				p.addf("pane %s written twice with different content: %+v and %+v", pn.ID(), prev, pn)
			}
			continue
		}
		byID[pn.ID()] = pn
		id := ident{normalTime(pn.WindowStart), pn.Key}
		idents[id] = append(idents[id], pn)
	}
	for id, ps := range idents {
		slices.SortFunc(ps, func(a, b window.Pane) int { return cmp.Compare(a.Index, b.Index) })
		name := fmt.Sprintf("window %s key %q", id.start.Format(time.RFC3339Nano), id.key)
		var c *session
		if !sess && modelled {
			if c = a.cells[cellID{id.start.Unix(), id.key}]; c == nil || !c.start.Equal(id.start) {
				p.addf("%s: %d panes but no accepted order", name, len(ps))
				continue
			}
		}
		onTime, stage := 0, 0 // stage: 0 early, 1 on time, 2 late, 3 merged
		for i, pn := range ps {
			if pn.Index != int64(i) {
				p.addf("%s: pane indexes %v are not contiguous from 0", name,
					fields(ps, func(p window.Pane) int64 { return p.Index }))
				break
			}
			if pn.Aggregation != a.spec.Name || pn.Accumulation != a.spec.Accumulation {
				p.addf("pane %s: aggregation %q mode %s, want %q %s", pn.ID(), pn.Aggregation, pn.Accumulation, a.spec.Name, a.spec.Accumulation)
			}
			if c != nil && !c.end.Equal(pn.WindowEnd) {
				p.addf("pane %s: end %s, want %s", pn.ID(), pn.WindowEnd, c.end)
			}
			atEnd := !pn.Watermark.IsZero() && !pn.Watermark.Before(pn.WindowEnd)
			s := 0
			switch {
			case pn.Timing == window.TimingEarly && atEnd:
				p.addf("pane %s: EARLY at watermark %s >= end %s", pn.ID(), pn.Watermark, pn.WindowEnd)
			case pn.Timing == window.TimingEarly:
			case pn.Timing == window.TimingOnTime:
				s, onTime = 1, onTime+1
				if !atEnd {
					p.addf("pane %s: ON_TIME at watermark %s < end %s", pn.ID(), pn.Watermark, pn.WindowEnd)
				}
			case pn.Timing == window.TimingLate:
				s = 2
				if !atEnd && !sess { // a session that fired may extend past W
					p.addf("pane %s: LATE at watermark %s < end %s", pn.ID(), pn.Watermark, pn.WindowEnd)
				}
			case pn.Timing == window.TimingMerged && sess:
				s = 3
				if !pn.MergedInto.Before(pn.WindowStart) {
					p.addf("pane %s: MERGED into %s, not an earlier start", pn.ID(), pn.MergedInto)
				}
			default:
				p.addf("pane %s: unknown timing %q", pn.ID(), pn.Timing)
			}
			if pn.Timing != window.TimingMerged && !pn.MergedInto.IsZero() {
				p.addf("pane %s: %s with merged_into %s", pn.ID(), pn.Timing, pn.MergedInto)
			}
			if s < stage || (s == stage && (s == 1 || s == 3)) {
				p.addf("%s: timings %v are not EARLY* ON_TIME? LATE* MERGED?", name,
					fields(ps, func(p window.Pane) window.Timing { return p.Timing }))
			}
			stage = max(stage, s)
			if i > 0 && s != 3 && a.spec.Accumulation == window.Accumulating && pn.Measures.Pedidos < ps[i-1].Measures.Pedidos {
				p.addf("pane %s: accumulating pane has %d pedidos, fewer than the previous %d", pn.ID(), pn.Measures.Pedidos, ps[i-1].Measures.Pedidos)
			}
		}
		want := 0
		if c != nil && c.onTimeDone {
			want = 1
		}
		if c != nil && onTime != want {
			p.addf("%s: %d ON_TIME panes, want %d", name, onTime, want)
		}
	}
	for _, c := range a.sortedCells() {
		if c.next > 0 && len(idents[ident{normalTime(c.start), c.key}]) == 0 {
			p.addf("window %s key %q: no pane, the model emitted %d", c.start.Format(time.RFC3339), c.key, c.next)
		}
	}
	if !modelled || !a.settled() {
		return p.err()
	}
	view, err := View(slices.Collect(maps.Values(byID)))
	if err != nil {
		p.addf("%v", err)
	}
	if diff := gocmp.Diff(a.final(), view); diff != "" {
		p.addf("final values of the view are not the sums of the accepted orders (-want +got):\n%s", diff)
	}
	return p.err()
}

// CheckDrops checks invariant 3 on the drops an implementation recorded for
// aggregation name:
// exactly the model's too-late orders, each with its window (rewrites of one
// are harmless) and a watermark at or past end + L.
func (m *Multi) CheckDrops(name string, drops []Drop) error {
	a, p := m.agg(name), problems{}
	want := map[OrderWindow]bool{}
	for _, d := range a.drops {
		want[OrderWindow{d.PedidoID, normalTime(d.WindowStart)}] = true
	}
	got := map[OrderWindow]bool{}
	for _, d := range drops {
		ow := OrderWindow{d.PedidoID, normalTime(d.WindowStart)}
		if got[ow] {
			continue
		}
		got[ow] = true
		start := d.WindowStart.Format(time.RFC3339)
		if !want[ow] {
			seen := "never saw it"
			if f, ok := a.fates[ow]; ok {
				seen = fmt.Sprintf("says it was %s", f)
			}
			p.addf("%s: order %s dropped from window %s; the model %s", a.spec.Name, d.PedidoID, start, seen)
			continue
		}
		if end := d.WindowStart.Add(a.spec.Size() + a.spec.AllowedLateness); d.Watermark.Before(end) {
			p.addf("%s: order %s dropped from window %s at watermark %s, before end + L = %s",
				a.spec.Name, d.PedidoID, start, d.Watermark, end)
		}
	}
	for _, d := range a.drops {
		if !got[OrderWindow{d.PedidoID, normalTime(d.WindowStart)}] {
			p.addf("%s: order %s was not dropped from window %s; the model dropped it",
				a.spec.Name, d.PedidoID, d.WindowStart.Format(time.RFC3339))
		}
	}
	return p.err()
}

// CheckFates checks invariant 2 for aggregation name: every (order,
// window) has exactly the model's fate, and there are no others.
func (m *Multi) CheckFates(name string, fates map[OrderWindow]Fate) error {
	var p problems
	want := m.agg(name).fates
	got := make(map[OrderWindow]Fate, len(fates))
	for k, f := range fates {
		got[OrderWindow{k.PedidoID, normalTime(k.WindowStart)}] = f
	}
	at := func(k OrderWindow) string {
		return fmt.Sprintf("%s: order %s window %s", name, k.PedidoID, k.WindowStart.Format(time.RFC3339))
	}
	for k, f := range want {
		if got[k] != f {
			p.addf("%s is %q, want %q", at(k), got[k], f)
		}
	}
	for k, f := range got {
		if _, ok := want[k]; !ok {
			p.addf("%s is %q, but the model holds no element of it there", at(k), f)
		}
	}
	return p.err()
}

func normalTime(t time.Time) time.Time { return t.UTC().Round(0) }

// fields lists one field of each pane, for messages.
func fields[T any](ps []window.Pane, f func(window.Pane) T) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = f(p)
	}
	return out
}

// CheckAgainst holds what a system under test emitted for aggregation name,
// from a stream made with cfg, to the model: the invariants of its panes,
// its drops and (order, window) fates and, once the stream closed (not
// cfg.Open), a dashboard view equal to the model's sums of the accepted elements.
func (m *Multi) CheckAgainst(name string, panes []window.Pane, drops []Drop,
	fates map[OrderWindow]Fate, cfg StreamConfig,
) error {
	errs := []error{m.CheckPanes(name, panes), m.CheckDrops(name, drops), m.CheckFates(name, fates)}
	if diff := gocmp.Diff(m.Drops(name), drops, cmpopts.EquateEmpty()); diff != "" {
		errs = append(errs, fmt.Errorf("%s: drops differ (-model +got):\n%s", name, diff))
	}
	if !cfg.Open {
		view, err := View(panes)
		if diff := gocmp.Diff(m.Final(name), view); err == nil && diff != "" {
			err = fmt.Errorf("%s: dashboard view differs from the sums of the accepted elements "+
				"(-want +got):\n%s", name, diff)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
