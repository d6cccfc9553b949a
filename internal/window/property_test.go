package window_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// coverage counts what the random streams exercised, so that the property
// test fails if the generator stops producing the cases it exists for.
type coverage struct {
	timings         map[window.Timing]int
	lateBatched     int // LATE panes emitted by a tick before expiry
	expiryFlush     int // final LATE panes forced by expiry
	onTimeUnchanged int // ON_TIME panes with nothing new since an EARLY pane
	onlyLate        int // windows whose first pane is LATE
	drops           int
	duplicates      int
	invalid         int
	streams         int
}

func TestPropertyAgainstModel(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 30
	}
	cov := coverage{timings: map[window.Timing]int{}}
	for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
		for _, lateDelay := range []time.Duration{time.Minute, 3 * time.Minute} {
			for seed := range uint64(seeds) {
				r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^0xa1b1a))
				spec := windowtest.RandomSpec(r)
				spec.Accumulation, spec.LateDelay = mode, lateDelay
				cfg := windowtest.StreamConfig{Open: seed%10 == 9}
				events := windowtest.Stream(r, spec, cfg)
				if err := runAgainstModel(spec, events, cfg, &cov); err != nil {
					t.Fatalf("%s Ld=%v seed %d, spec %+v:\n%v", mode, lateDelay, seed, spec, err)
				}
			}
		}
	}
	t.Logf("coverage: %+v", cov)
	for name, n := range map[string]int{
		"EARLY": cov.timings[window.TimingEarly], "ON_TIME": cov.timings[window.TimingOnTime],
		"LATE":                        cov.timings[window.TimingLate],
		"late pane batched by a tick": cov.lateBatched, "final pane at expiry": cov.expiryFlush,
		"ON_TIME without change": cov.onTimeUnchanged, "window of late orders only": cov.onlyLate,
		"too-late drop": cov.drops, "duplicate": cov.duplicates, "invalid": cov.invalid,
	} {
		if n == 0 {
			t.Errorf("the streams never produced a %s", name)
		}
	}
}

// TestPropertyDefaults runs the production configuration, whose hour windows
// and two hours of lateness need longer streams to close windows.
func TestPropertyDefaults(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	cov := coverage{timings: map[window.Timing]int{}}
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 0xdefa))
		spec := window.Defaults()
		cfg := windowtest.StreamConfig{Events: 400}
		if err := runAgainstModel(spec, windowtest.Stream(r, spec, cfg), cfg, &cov); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if cov.timings[window.TimingOnTime] == 0 || cov.timings[window.TimingLate] == 0 || cov.drops == 0 {
		t.Errorf("default streams exercised too little: %+v", cov)
	}
}

// runAgainstModel plays events through the driver and the model and checks,
// after every event, that both emitted the same panes and that redelivering
// the message or re-running the tick changes nothing; at the end, that
// drops, fates and all invariants agree.
func runAgainstModel(spec window.Spec, events []windowtest.Event, cfg windowtest.StreamConfig, cov *coverage) error {
	model := windowtest.NewModel(spec)
	drv := newDriver(spec)
	seenIDs := map[string]bool{}
	for i, e := range events {
		want := model.Apply(e)
		got, err := drv.apply(e)
		if err != nil {
			return fmt.Errorf("event %d %+v: %w", i, e, err)
		}
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("event %d %s at %s (order %+v): panes differ (-model +driver):\n%s",
				i, e.Kind, e.Now, e.Order, diff)
		}
		if !model.Watermark().Equal(drv.ws.Watermark) {
			return fmt.Errorf("event %d: watermark %s, model %s", i, drv.ws.Watermark, model.Watermark())
		}

		// Invariant 6: the same message again, or the same tick again.
		before := drv.snapshot()
		again, err := drv.apply(e)
		if err != nil {
			return fmt.Errorf("event %d again: %w", i, err)
		}
		// DeepEqual first: cmp.Diff over every snapshot would dominate the run.
		if after := drv.snapshot(); !reflect.DeepEqual(before, after) || len(again) > 0 {
			return fmt.Errorf("event %d %s repeated changed the state (-before +after):\n%s\npanes: %+v",
				i, e.Kind, cmp.Diff(before, after), again)
		}
		cov.count(spec, e, got, seenIDs)
	}
	if err := model.CheckPanes(model.Panes()); err != nil {
		return fmt.Errorf("the model breaks an invariant: %w", err)
	}
	if err := model.CheckPanes(drv.panes); err != nil {
		return err
	}
	if err := model.CheckDrops(drv.drops); err != nil {
		return err
	}
	if diff := cmp.Diff(model.Drops(), drv.drops); diff != "" {
		return fmt.Errorf("drops differ (-model +driver):\n%s", diff)
	}
	if err := model.CheckFates(drv.seen); err != nil {
		return err
	}
	if got := len(drv.invalid); got != len(model.InvalidMessages()) {
		return fmt.Errorf("%d invalid messages, model %d", got, len(model.InvalidMessages()))
	}
	if !cfg.Open {
		if !model.Settled() {
			return fmt.Errorf("the closing tick left changes un-emitted")
		}
		if len(drv.cells) != 0 {
			return fmt.Errorf("the closing tick left %d windows unexpired", len(drv.cells))
		}
		view, err := windowtest.View(drv.panes)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(model.Final(), view); diff != "" {
			return fmt.Errorf("dashboard view differs from the sums of accepted orders (-want +got):\n%s", diff)
		}
	}
	cov.streams++
	cov.drops += len(drv.drops)
	return nil
}

func (c *coverage) count(spec window.Spec, e windowtest.Event, panes []window.Pane, seen map[string]bool) {
	if e.Kind == windowtest.Deliver {
		switch {
		case e.Invalid != "":
			c.invalid++
		case seen[e.Order.ID]:
			c.duplicates++
		}
		seen[e.Order.ID] = true
	}
	for _, p := range panes {
		c.timings[p.Timing]++
		switch {
		case p.Timing == window.TimingLate && p.Watermark.Before(p.WindowEnd.Add(spec.AllowedLateness)):
			c.lateBatched++
		case p.Timing == window.TimingLate:
			c.expiryFlush++
		case p.Timing == window.TimingOnTime && p.Index > 0 &&
			(p.Accumulation == window.Discarding && p.Measures.IsZero()):
			c.onTimeUnchanged++
		}
		if p.Index == 0 && p.Timing == window.TimingLate {
			c.onlyLate++
		}
	}
}
