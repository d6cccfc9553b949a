package windowtest

import (
	"slices"
	"testing"

	"github.com/alpinashop/alpipe/internal/window"
)

// Coverage counts what random streams exercised, by case (a pane's timing,
// or a name a property test gives), so that a property test fails if the
// generator stops producing the cases it exists for.
type Coverage map[string]int

// Require fails t for every name never counted.
func (c Coverage) Require(t testing.TB, names ...string) {
	t.Helper()
	t.Logf("coverage: %v", c)
	for _, n := range names {
		if c[n] == 0 {
			t.Errorf("the streams never produced a %s", n)
		}
	}
}

// CountPanes counts panes of specs by timing and by the cases below.
func (c Coverage) CountPanes(specs []window.Spec, panes []window.Pane) {
	for _, p := range panes {
		c[string(p.Timing)]++
		if p.Timing == window.TimingLate && p.Index == 0 {
			c["window of late orders only"]++
		}
		i := slices.IndexFunc(specs, func(s window.Spec) bool { return s.Name == p.Aggregation })
		switch {
		case p.Timing == window.TimingMerged && p.Measures.Pedidos < 0:
			c["retraction"]++
		case p.Timing == window.TimingOnTime && p.Index > 0 && p.Accumulation == window.Discarding &&
			p.Measures.IsZero():
			c["ON_TIME without change"]++
		case p.Timing != window.TimingLate:
		case p.Watermark.Before(p.WindowEnd.Add(specs[i].AllowedLateness)):
			c["late pane batched by a tick"]++
		default:
			c["final pane at expiry"]++
		}
	}
}
