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

// TestProperties plays random streams, in both accumulation modes and with
// several late delays, through the driver over package window and through
// the reference model, random deliveries batched in one transaction: the
// driver must emit exactly the model's panes (MERGED included), watermarks,
// drops and fates, the view of a closed stream must be the model's sums (for
// sessions invariant 7), and the streams must produce every case in require.
func TestProperties(t *testing.T) {
	multiCases := []string{"EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "final pane at expiry", "too-late drop",
		"order too late for its older windows only", "line without a SKU", "order with two lines of one SKU",
		"order without a SKU", "duplicate", "invalid", "batch"}
	twoDelays := []time.Duration{time.Minute, 3 * time.Minute}
	simple := func(r *rand.Rand, specs []window.Spec, cfg windowtest.StreamConfig) []windowtest.MultiEvent {
		return windowtest.Stream(r, specs[0], cfg)
	}
	openTenth := func(seed uint64) windowtest.StreamConfig { return windowtest.StreamConfig{Open: seed%10 == 9} }
	tests := []struct {
		name         string
		seeds, short int
		lateDelays   []time.Duration
		salt         uint64
		draw         func(*rand.Rand) []window.Spec
		cfg          func(seed uint64) windowtest.StreamConfig
		stream       func(*rand.Rand, []window.Spec, windowtest.StreamConfig) []windowtest.MultiEvent
		maxBatch     int
		require      []string
	}{
		{
			name: "one fixed aggregation fed simple orders", seeds: 300, short: 30, lateDelays: twoDelays,
			salt:     0xa1b1a,
			draw:     func(r *rand.Rand) []window.Spec { return []window.Spec{windowtest.RandomSpec(r)} },
			cfg:      openTenth,
			stream:   simple,
			maxBatch: 1,
			require: []string{"EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "final pane at expiry",
				"ON_TIME without change", "window of late orders only", "too-late drop", "duplicate", "invalid"},
		},
		{
			name: "Multi: one to three fixed or sliding aggregations", seeds: 120, short: 8, lateDelays: twoDelays,
			salt:     0x5117de,
			draw:     windowtest.RandomSpecs,
			cfg:      openTenth,
			stream:   windowtest.MultiStream,
			maxBatch: 8,
			require:  multiCases,
		},
		{
			name: "Multi: the shipped aggregations", seeds: 25, short: 1, lateDelays: twoDelays,
			salt:     0x5417,
			draw:     func(*rand.Rand) []window.Spec { return windowtest.ShippedSpecs() },
			cfg:      func(uint64) windowtest.StreamConfig { return windowtest.StreamConfig{Events: 400} },
			stream:   windowtest.MultiStream,
			maxBatch: 8,
			require: []string{"EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "too-late drop",
				"order too late for its older windows only", "line without a SKU", "duplicate"},
		},
		// 180 streams: every coverage class many times over, in about 40 s on 2 cores.
		{
			name: "Multi: one of each kind of window", seeds: 30, short: 8,
			lateDelays: []time.Duration{time.Minute, 90 * time.Second, 3 * time.Minute},
			salt:       0x5e55,
			draw:       windowtest.RandomKinds,
			cfg: func(seed uint64) windowtest.StreamConfig {
				return windowtest.StreamConfig{Open: seed%10 == 9, Events: 300}
			},
			stream:   windowtest.MultiStream,
			maxBatch: 8,
			require: append(multiCases, "MERGED", "retraction", "merge", "bridge", "session start moved",
				"change after ON_TIME", "bridge past an expired session", "fired session extended past W"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seeds := tt.seeds
			if testing.Short() {
				seeds = tt.short
			}
			cov := windowtest.Coverage{}
			for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
				for _, lateDelay := range tt.lateDelays {
					for seed := range uint64(seeds) {
						// The specs and the stream come from one generator.
						r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^tt.salt))
						specs := tt.draw(r)
						for i := range specs {
							specs[i].Accumulation, specs[i].LateDelay = mode, lateDelay
						}
						cfg := tt.cfg(seed)
						if err := runMultiAgainstModel(specs, tt.stream(r, specs, cfg), cfg, seed, tt.maxBatch, cov); err != nil {
							t.Fatalf("%s Ld=%v seed %d, specs %+v:\n%v", mode, lateDelay, seed, specs, err)
						}
					}
				}
			}
			cov.Require(t, tt.require...)
		})
	}
}

// runMultiAgainstModel plays events through the driver, deliveries in
// random batches, and through the model, and checks after every step that
// both emitted the same panes and watermarks and that repeating the step
// changes nothing; at the end, that drops, fates and every invariant agree
// per aggregation (streamtest holds sku_missing records to the model).
func runMultiAgainstModel(specs []window.Spec, events []windowtest.MultiEvent, cfg windowtest.StreamConfig, seed uint64,
	maxBatch int, cov windowtest.Coverage) error {
	model := windowtest.NewMulti(specs...)
	drv := newDriver(specs...)
	batchRand := rand.New(rand.NewPCG(seed, 0xba7c4))
	seenIDs := map[string]bool{}
	for i := 0; i < len(events); {
		e := events[i]
		n := 1
		if e.Kind == windowtest.Deliver {
			for size := 1 + batchRand.IntN(maxBatch); n < size && i+n < len(events) && events[i+n].Kind == windowtest.Deliver; n++ {
			}
		}
		step := events[i : i+n]
		var want []window.Pane
		for _, e := range step {
			want = append(want, model.Apply(e)...)
		}
		got, err := drv.apply(step...)
		if err != nil {
			return fmt.Errorf("event %d %s: %w", i, e.Kind, err)
		}
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		// DeepEqual first: cmp.Diff on every step would dominate the run.
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("event %d %s at %s (%d events, first order %+v): panes differ (-model +driver):\n%s",
				i, e.Kind, e.Now, n, e.Order, cmp.Diff(want, got))
		}
		for _, a := range drv.aggs {
			if w := model.Watermark(a.spec.Name); !w.Equal(a.ws.Watermark) {
				return fmt.Errorf("event %d: %s watermark %s, model %s", i, a.spec.Name, a.ws.Watermark, w)
			}
		}

		// Invariant 6: the same messages again, or the same tick again.
		before := drv.snapshot()
		again, err := drv.apply(step...)
		if err != nil {
			return fmt.Errorf("event %d again: %w", i, err)
		}
		if after := drv.snapshot(); !reflect.DeepEqual(before, after) || len(again) > 0 {
			return fmt.Errorf("event %d %s repeated changed the state (-before +after):\n%s\npanes: %+v",
				i, e.Kind, cmp.Diff(before, after), again)
		}
		countSteps(cov, step, seenIDs)
		cov.CountPanes(specs, got)
		i += n
	}

	for _, a := range drv.aggs {
		name := a.spec.Name
		if err := model.CheckPanes(name, model.Panes(name)); err != nil {
			return fmt.Errorf("the model breaks an invariant: %w", err)
		}
		if err := model.CheckAgainst(name, a.panes, a.drops, a.fates, cfg); err != nil {
			return err
		}
		cov["too-late drop"] += len(a.drops)
		for k, n := range model.SessionStats(name) {
			cov[k] += n
		}
		cov["order too late for its older windows only"] += partialDrops(model.Fates(name))
	}
	if got, want := len(drv.invalid), len(model.InvalidMessages()); got != want {
		return fmt.Errorf("%d invalid messages, model %d", got, want)
	}
	if got, want := len(drv.seen), len(model.Orders()); got != want {
		return fmt.Errorf("%d dedup records, model %d orders", got, want)
	}
	if !cfg.Open {
		if !model.Settled() {
			return fmt.Errorf("the closing tick left changes un-emitted")
		}
		for _, a := range drv.aggs {
			if len(a.cells) != 0 || len(a.sessions) != 0 {
				return fmt.Errorf("%s: the closing tick left %d windows and the sessions of %d keys unexpired", a.spec.Name, len(a.cells), len(a.sessions))
			}
		}
	}
	return nil
}

// partialDrops counts the orders with a dropped and an accepted window.
func partialDrops(fates map[windowtest.OrderWindow]windowtest.Fate) int {
	seen := map[string]windowtest.Fate{}
	n := 0
	for ow, f := range fates {
		switch prev, ok := seen[ow.PedidoID]; {
		case !ok:
			seen[ow.PedidoID] = f
		case prev != f && prev != "both":
			seen[ow.PedidoID] = "both"
			n++
		}
	}
	return n
}

// countSteps counts batches and the kinds of deliveries in step.
func countSteps(c windowtest.Coverage, step []windowtest.MultiEvent, seen map[string]bool) {
	if len(step) > 1 {
		c["batch"]++
	}
	for _, e := range step {
		if e.Kind != windowtest.Deliver {
			continue
		}
		switch {
		case e.Invalid != "":
			c["invalid"]++
			continue
		case seen[e.Order.PedidoID]:
			c["duplicate"]++
			continue
		}
		seen[e.Order.PedidoID] = true
		elems, missing := windowtest.Elements(windowtest.KeySKU, e.Order)
		c["line without a SKU"] += len(missing)
		switch {
		case len(elems) == 0:
			c["order without a SKU"]++
		case len(elems) < len(e.Order.Lineas)-len(missing):
			c["order with two lines of one SKU"]++
		}
	}
}
