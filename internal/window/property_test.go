package window_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

func TestPropertyAgainstModel(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 30
	}
	cov := multiCoverage{timings: map[window.Timing]int{}}
	eachStream(t, seeds, []time.Duration{time.Minute, 3 * time.Minute}, 0xa1b1a,
		func(r *rand.Rand) []window.Spec { return []window.Spec{windowtest.RandomSpec(r)} },
		func(r *rand.Rand, specs []window.Spec, seed uint64) error {
			cfg := windowtest.StreamConfig{Open: seed%10 == 9}
			return runAgainstModel(specs[0], windowtest.Stream(r, specs[0], cfg), cfg, seed, &cov)
		})
	cov.require(t, "EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "final pane at expiry",
		"ON_TIME without change", "window of late orders only", "too-late drop", "duplicate", "invalid")
}

// TestPropertyDefaults runs the production configuration, whose hour windows
// and two hours of lateness need longer streams to close windows.
func TestPropertyDefaults(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	cov := multiCoverage{timings: map[window.Timing]int{}}
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 0xdefa))
		spec := window.Defaults()
		cfg := windowtest.StreamConfig{Events: 400}
		if err := runAgainstModel(spec, windowtest.Stream(r, spec, cfg), cfg, seed, &cov); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	cov.require(t, "ON_TIME", "LATE", "too-late drop")
}

// runAgainstModel holds Model to Multi after every event (the same panes
// and watermark; at the end the same drops, fates, invalid messages and
// final sums), then plays the stream through the driver against Multi, one
// event per transaction.
func runAgainstModel(spec window.Spec, events []windowtest.Event, cfg windowtest.StreamConfig, seed uint64,
	cov *multiCoverage) error {
	model, multi := windowtest.NewModel(spec), windowtest.NewMulti(spec)
	mevents := make([]windowtest.MultiEvent, len(events))
	for i, e := range events {
		mevents[i] = asMulti(e)
		// DeepEqual first: cmp.Diff on every event would dominate the run.
		want, got := model.Apply(e), multi.Apply(mevents[i])
		if len(want)+len(got) > 0 && !reflect.DeepEqual(want, got) {
			return fmt.Errorf("event %d %s at %s: panes (-Model +Multi):\n%s", i, e.Kind, e.Now, cmp.Diff(want, got))
		}
		if w := multi.Watermark(spec.Name); !model.Watermark().Equal(w) {
			return fmt.Errorf("event %d: watermark %s, Model %s", i, w, model.Watermark())
		}
	}
	fates := map[string]windowtest.Fate{}
	for ow, f := range multi.Fates(spec.Name) {
		fates[ow.PedidoID] = f // fixed windows: an order's one window
	}
	for what, d := range map[string]string{
		"drops":            cmp.Diff(model.Drops(), multi.Drops(spec.Name)),
		"fates":            cmp.Diff(model.Fates(), fates),
		"invalid messages": cmp.Diff(model.InvalidMessages(), multi.InvalidMessages()),
		"final sums":       cmp.Diff(model.Final(), multi.Final(spec.Name)),
	} {
		if d != "" {
			return fmt.Errorf("%s (-Model +Multi):\n%s", what, d)
		}
	}
	if model.Settled() != multi.Settled() {
		return fmt.Errorf("Model settled %v, Multi %v", model.Settled(), multi.Settled())
	}
	return runMultiAgainstModel([]window.Spec{spec}, mevents, cfg, seed, 1, cov)
}

// multiCoverage counts what the random multi-aggregation streams
// exercised, so that the property tests fail if the generator stops
// producing the cases they exist for.
type multiCoverage struct {
	timings      map[window.Timing]int
	lateBatched  int // LATE panes emitted by a tick before expiry
	expiryFlush  int // final LATE panes forced by expiry
	onTimeSame   int // DISCARDING ON_TIME panes with nothing new since an EARLY pane
	onlyLate     int // identities whose first pane is LATE
	drops        int // too-late (order, window)s
	partial      int // orders too late for older windows that count in newer ones
	skuMissing   int
	sameSKUTwice int // orders with two lines of one SKU
	noSKU        int // orders with no line carrying a SKU
	duplicates   int
	invalid      int
	batches      int // batches of more than one delivery
	sessions     windowtest.SessionStats
	retractions  int // DISCARDING MERGED panes taking back what they emitted
	streams      int
}

func (c *multiCoverage) require(t *testing.T, names ...string) {
	t.Helper()
	t.Logf("coverage: %+v", *c)
	got := map[string]int{
		"EARLY": c.timings[window.TimingEarly], "ON_TIME": c.timings[window.TimingOnTime], "LATE": c.timings[window.TimingLate],
		"late pane batched by a tick": c.lateBatched,
		"final pane at expiry":        c.expiryFlush, "too-late drop": c.drops,
		"ON_TIME without change": c.onTimeSame, "window of late orders only": c.onlyLate,
		"order too late for its older windows only": c.partial, "line without a SKU": c.skuMissing,
		"order with two lines of one SKU": c.sameSKUTwice, "order without a SKU": c.noSKU,
		"duplicate": c.duplicates, "invalid": c.invalid, "batch": c.batches,
		"MERGED": c.timings[window.TimingMerged], "retraction": c.retractions,
		"merge": c.sessions.Merges, "bridge": c.sessions.Bridges, "session start moved": c.sessions.StartMoved,
		"change after ON_TIME": c.sessions.AfterFired, "bridge past an expired session": c.sessions.PastExpired,
		"fired session extended past W": c.sessions.FiredExtended,
	}
	for _, n := range names {
		if got[n] == 0 {
			t.Errorf("the streams never produced a %s", n)
		}
	}
}

var allMultiCases = []string{"EARLY", "ON_TIME", "LATE", "late pane batched by a tick",
	"final pane at expiry", "too-late drop", "order too late for its older windows only", "line without a SKU",
	"order with two lines of one SKU", "order without a SKU", "duplicate", "invalid", "batch"}

// TestMultiPropertyAgainstModel: random sets of one to three aggregations
// (fixed and sliding windows, keys pais, cliente_id and sku), random
// streams of whole orders, random batch boundaries, both accumulation
// modes and two late delays: the driver over package window emits exactly
// the reference model's panes, drops, fates and sku_missing records.
func TestMultiPropertyAgainstModel(t *testing.T) {
	seeds := 120
	if testing.Short() {
		seeds = 8
	}
	cov := multiCoverage{timings: map[window.Timing]int{}}
	eachStream(t, seeds, []time.Duration{time.Minute, 3 * time.Minute}, 0x5117de, windowtest.RandomSpecs,
		func(r *rand.Rand, specs []window.Spec, seed uint64) error {
			cfg := windowtest.StreamConfig{Open: seed%10 == 9}
			return runMultiAgainstModel(specs, windowtest.MultiStream(r, specs, cfg), cfg, seed, 8, &cov)
		})
	cov.require(t, allMultiCases...)
}

// TestMultiPropertyShipped runs the shipped aggregations side by side
// (ShippedSpecs), in both modes and two late delays.
func TestMultiPropertyShipped(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 1
	}
	cov := multiCoverage{timings: map[window.Timing]int{}}
	eachStream(t, seeds, []time.Duration{time.Minute, 3 * time.Minute}, 0x5417,
		func(*rand.Rand) []window.Spec { return windowtest.ShippedSpecs() },
		func(r *rand.Rand, specs []window.Spec, seed uint64) error {
			cfg := windowtest.StreamConfig{Events: 400}
			return runMultiAgainstModel(specs, windowtest.MultiStream(r, specs, cfg), cfg, seed, 8, &cov)
		})
	cov.require(t, "EARLY", "ON_TIME", "LATE", "late pane batched by a tick",
		"too-late drop", "order too late for its older windows only", "line without a SKU", "duplicate")
}

// TestMultiPropertyKinds: random streams through one aggregation of each
// kind of window at once (fixed, sliding, session), random batch
// boundaries, both accumulation modes and several late delays: the driver
// over package window emits exactly the model's panes (MERGED ones
// included), drops and fates, and the sessions the view shows are the
// model's, each with the sum of its orders (invariant 7).
func TestMultiPropertyKinds(t *testing.T) {
	seeds := 30 // 180 streams: every coverage class many times over, in about 40 s on 2 cores
	if testing.Short() {
		seeds = 8
	}
	cov := multiCoverage{timings: map[window.Timing]int{}}
	lateDelays := []time.Duration{time.Minute, 90 * time.Second, 3 * time.Minute}
	eachStream(t, seeds, lateDelays, 0x5e55, windowtest.RandomKinds,
		func(r *rand.Rand, specs []window.Spec, seed uint64) error {
			cfg := windowtest.StreamConfig{Open: seed%10 == 9, Events: 300}
			return runMultiAgainstModel(specs, windowtest.MultiStream(r, specs, cfg), cfg, seed, 8, &cov)
		})
	cov.require(t, append(allMultiCases, "MERGED", "retraction", "merge", "bridge", "session start moved",
		"change after ON_TIME", "bridge past an expired session", "fired session extended past W")...)
}

// eachStream runs play for both accumulation modes, each late delay and
// seeds seeds: specs drawn from a generator seeded by (seed, Ld ^ salt), set
// to the mode and Ld, and the same generator for play's stream.
func eachStream(t *testing.T, seeds int, lateDelays []time.Duration, salt uint64,
	draw func(*rand.Rand) []window.Spec, play func(r *rand.Rand, specs []window.Spec, seed uint64) error) {
	t.Helper()
	for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
		for _, lateDelay := range lateDelays {
			for seed := range uint64(seeds) {
				r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^salt))
				specs := draw(r)
				for i := range specs {
					specs[i].Accumulation, specs[i].LateDelay = mode, lateDelay
				}
				if err := play(r, specs, seed); err != nil {
					t.Fatalf("%s Ld=%v seed %d, specs %+v:\n%v", mode, lateDelay, seed, specs, err)
				}
			}
		}
	}
}

// runMultiAgainstModel plays events through the driver, deliveries in
// random batches, and through the model, and checks after every step that
// both emitted the same panes and watermarks and that repeating the step
// changes nothing; at the end, that drops, fates, sku_missing records and
// every invariant agree per aggregation.
func runMultiAgainstModel(specs []window.Spec, events []windowtest.MultiEvent, cfg windowtest.StreamConfig, seed uint64,
	maxBatch int, cov *multiCoverage) error {
	model := windowtest.NewMulti(specs...)
	drv := newMultiDriver(specs)
	byName := map[string]window.Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
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
		run := func() ([]window.Pane, error) {
			if e.Kind == windowtest.Tick {
				return drv.tick(e.Now)
			}
			return drv.deliverBatch(step)
		}
		got, err := run()
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
		again, err := run()
		if err != nil {
			return fmt.Errorf("event %d again: %w", i, err)
		}
		if after := drv.snapshot(); !reflect.DeepEqual(before, after) || len(again) > 0 {
			return fmt.Errorf("event %d %s repeated changed the state (-before +after):\n%s\npanes: %+v",
				i, e.Kind, cmp.Diff(before, after), again)
		}
		cov.count(byName, step, got, seenIDs)
		i += n
	}

	for _, a := range drv.aggs {
		name := a.spec.Name
		if err := model.CheckPanes(name, model.Panes(name)); err != nil {
			return fmt.Errorf("the model breaks an invariant: %w", err)
		}
		if err := model.CheckPanes(name, a.panes); err != nil {
			return err
		}
		if err := model.CheckDrops(name, a.drops); err != nil {
			return err
		}
		if diff := cmp.Diff(model.Drops(name), a.drops); diff != "" {
			return fmt.Errorf("%s: drops differ (-model +driver):\n%s", name, diff)
		}
		if err := model.CheckFates(name, a.fates); err != nil {
			return err
		}
		cov.drops += len(a.drops)
		if a.spec.Session() {
			st := model.SessionStats(name)
			cov.sessions.Merges += st.Merges
			cov.sessions.Bridges += st.Bridges
			cov.sessions.StartMoved += st.StartMoved
			cov.sessions.AfterFired += st.AfterFired
			cov.sessions.PastExpired += st.PastExpired
			cov.sessions.FiredExtended += st.FiredExtended
		}
		cov.partial += partialDrops(model.Fates(name))
	}
	if diff := cmp.Diff(model.SKUMissing(), drv.missing); diff != "" {
		return fmt.Errorf("sku_missing records differ (-model +driver):\n%s", diff)
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
			view, err := windowtest.View(a.panes)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(model.Final(a.spec.Name), view); diff != "" {
				return fmt.Errorf("%s: dashboard view differs from the sums of accepted elements (-want +got):\n%s", a.spec.Name, diff)
			}
		}
	}
	cov.streams++
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

func (c *multiCoverage) count(specs map[string]window.Spec, step []windowtest.MultiEvent, panes []window.Pane, seen map[string]bool) {
	if len(step) > 1 {
		c.batches++
	}
	for _, e := range step {
		if e.Kind != windowtest.Deliver {
			continue
		}
		switch {
		case e.Invalid != "":
			c.invalid++
			continue
		case seen[e.Order.PedidoID]:
			c.duplicates++
			continue
		}
		seen[e.Order.PedidoID] = true
		skus := map[string]int{}
		for _, l := range e.Order.Lineas {
			sku := strings.ToUpper(strings.TrimSpace(l.SKU))
			if sku == "" {
				c.skuMissing++
				continue
			}
			skus[sku]++
			if skus[sku] == 2 {
				c.sameSKUTwice++
			}
		}
		if len(skus) == 0 {
			c.noSKU++
		}
	}
	for _, p := range panes {
		c.timings[p.Timing]++
		if p.Timing == window.TimingLate && p.Index == 0 {
			c.onlyLate++
		}
		switch {
		case p.Timing == window.TimingMerged && p.Measures.Pedidos < 0:
			c.retractions++
		case p.Timing == window.TimingOnTime && p.Index > 0 && p.Accumulation == window.Discarding && p.Measures.IsZero():
			c.onTimeSame++
		case p.Timing != window.TimingLate:
		case p.Watermark.Before(p.WindowEnd.Add(specs[p.Aggregation].AllowedLateness)):
			c.lateBatched++
		default:
			c.expiryFlush++
		}
	}
}
