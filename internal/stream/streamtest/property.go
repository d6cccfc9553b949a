package streamtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// property is a family of random streams played through the processor and
// windowtest.Multi: per accumulation mode, late delay and seed, the specs
// drawn and the stream generated from one generator.
type property struct {
	modes      []window.Accumulation
	lateDelays []time.Duration
	seeds      func(Features) int
	salt       uint64 // of the generator, with the late delay
	draw       func(r *rand.Rand, seed uint64) []window.Spec
	stream     func(*rand.Rand, []window.Spec, windowtest.StreamConfig) []windowtest.MultiEvent
	cfg        func(f Features, seed uint64) windowtest.StreamConfig
	batchSalt  uint64
	require    []string // coverage
}

var (
	bothModes = []window.Accumulation{window.Accumulating, window.Discarding}
	twoDelays = []time.Duration{time.Minute, 3 * time.Minute}
	oneStream = func(r *rand.Rand, specs []window.Spec, cfg windowtest.StreamConfig) []windowtest.MultiEvent {
		return windowtest.Stream(r, specs[0], cfg)
	}
	halfStreams = func(f Features) int { return max(1, f.Streams/2) }
	fifthOpen   = func(f Features, seed uint64) windowtest.StreamConfig {
		return windowtest.StreamConfig{Events: f.Events, Open: seed%5 == 4}
	}
)

// properties: one fixed aggregation fed simple orders; the production spec,
// whose hour windows and two hours of lateness need longer streams to close;
// whole orders through several aggregations (the shipped three, and random
// sets of fixed and sliding windows keyed by pais, cliente_id and sku); and
// one aggregation of each kind of window at once (fixed, sliding and
// session), whose MERGED panes, merges and bridges are compared like the rest.
var properties = []struct {
	name string
	property
}{
	{name: "PropertyAgainstModel", property: property{
		modes:      bothModes,
		lateDelays: twoDelays,
		seeds:      func(f Features) int { return f.Streams },
		salt:       0x57ea,
		draw: func(r *rand.Rand, _ uint64) []window.Spec {
			return []window.Spec{windowtest.RandomSpec(r)}
		},
		stream:    oneStream,
		cfg:       fifthOpen,
		batchSalt: 0xba7c4,
		require: []string{"EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "final pane at expiry",
			"too-late drop", "duplicate", "invalid"},
	}},
	// Defaults are accumulating with Ld = 1 min; the salt keeps the seeds' streams.
	{name: "PropertyDefaults", property: property{
		modes:      bothModes[:1],
		lateDelays: twoDelays[:1],
		seeds:      func(f Features) int { return f.DefaultStreams },
		salt:       0xdefa ^ uint64(time.Minute),
		draw:       func(*rand.Rand, uint64) []window.Spec { return []window.Spec{window.Defaults()} },
		stream:     oneStream,
		cfg: func(f Features, _ uint64) windowtest.StreamConfig {
			return windowtest.StreamConfig{Events: 2 * f.Events}
		},
		batchSalt: 0xba7c4,
		require:   []string{"ON_TIME", "LATE"},
	}},
	{name: "PropertySeveralAggregations", property: property{
		modes:      bothModes,
		lateDelays: twoDelays,
		seeds:      halfStreams,
		salt:       0x3a17,
		draw: func(r *rand.Rand, seed uint64) []window.Spec {
			if specs := windowtest.RandomSpecs(r); seed%3 != 0 {
				return specs
			}
			return windowtest.ShippedSpecs()
		},
		stream:    windowtest.MultiStream,
		cfg:       fifthOpen,
		batchSalt: 0x5eed,
		require: []string{"sliding aggregation", "sku aggregation",
			"order too late for some windows, on time for others", "line without a SKU", "LATE",
			"too-late drop", "duplicate"},
	}},
	{name: "PropertyThreeKinds", property: property{
		modes:      bothModes,
		lateDelays: []time.Duration{time.Minute, 90 * time.Second, 3 * time.Minute},
		seeds:      halfStreams,
		salt:       0x5e55,
		draw:       func(r *rand.Rand, _ uint64) []window.Spec { return windowtest.RandomKinds(r) },
		stream:     windowtest.MultiStream,
		cfg:        fifthOpen,
		batchSalt:  0x5eed,
		require:    []string{"MERGED"},
	}},
}

func testProperty(t *testing.T, en env, f Features, p property) {
	cov := windowtest.Coverage{}
	for _, mode := range p.modes {
		for _, lateDelay := range p.lateDelays {
			for seed := range uint64(p.seeds(f)) {
				t.Run(fmt.Sprintf("%s/Ld=%s/seed=%d", mode, lateDelay, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^p.salt))
					specs := p.draw(r, seed)
					for i := range specs {
						specs[i].Accumulation, specs[i].LateDelay = mode, lateDelay
					}
					cfg := p.cfg(f, seed)
					runAgainstModel(t, newRig(t, en, specs...), specs, p.stream(r, specs, cfg), cfg, p.batchSalt, cov)
				})
			}
		}
	}
	if !t.Failed() {
		cov.Require(t, p.require...)
	}
}

// runAgainstModel plays events through the processor and windowtest.Multi,
// deliveries in random batches of salt when the rig batches: after every
// step the sink holds exactly the model's panes and watermarks and
// invariant 6 holds (again); at the end drops, (order, window) fates, lines
// without a SKU, invalid messages and every invariant agree per
// aggregation, and a closed stream leaves no state and an exact dashboard
// view.
func runAgainstModel(t *testing.T, r *rig, specs []window.Spec, events []windowtest.MultiEvent, cfg windowtest.StreamConfig,
	salt uint64, cov windowtest.Coverage) {
	t.Helper()
	ctx := t.Context()
	model := windowtest.NewMulti(specs...)
	for _, s := range specs {
		if s.Sliding() {
			cov["sliding aggregation"]++
		}
		if s.KeyField == windowtest.KeySKU {
			cov["sku aggregation"]++
		}
	}
	fates := make([]map[windowtest.OrderWindow]windowtest.Fate, len(specs))
	for i := range fates {
		fates[i] = map[windowtest.OrderWindow]windowtest.Fate{}
	}
	first := map[string][]stream.Fate{} // per order, per aggregation
	invalidSeen := map[string]bool{}
	ws := make([]time.Time, len(specs))
	fail := func(i int, e windowtest.MultiEvent, format string, a ...any) {
		t.Helper()
		t.Fatalf("event %d %s at %s (message %s order %s %q): %s\nspecs %+v",
			i, e.Kind, e.Now.Format(time.RFC3339Nano), e.MessageID, e.Order.PedidoID, e.Invalid, fmt.Sprintf(format, a...), specs)
	}
	checkDelivery := func(i int, e windowtest.MultiEvent, res stream.Result) {
		t.Helper()
		if e.Invalid != "" {
			if !strings.HasPrefix(res.Invalid, "invalid: ") || res.Duplicate != invalidSeen[e.MessageID] {
				fail(i, e, "result %+v, want an invalid message (duplicate %v)", res, invalidSeen[e.MessageID])
			}
			if !invalidSeen[e.MessageID] {
				cov["invalid"]++
			}
			invalidSeen[e.MessageID] = true
			return
		}
		if res.Invalid != "" || len(res.Aggregations) != len(specs) {
			fail(i, e, "result %+v, want one outcome per aggregation", res)
		}
		prev, seen := first[e.Order.PedidoID]
		for ai, out := range res.Aggregations {
			if seen {
				if out.Fate != stream.Duplicate || out.Recorded != prev[ai] {
					fail(i, e, "%s: outcome %+v, want a duplicate of %s", specs[ai].Name, out, prev[ai])
				}
				cov["duplicate"]++
				continue
			}
			first[e.Order.PedidoID] = append(first[e.Order.PedidoID], out.Fate)
			dropped, accepted := false, false
			for _, el := range out.Elements {
				ow := windowtest.OrderWindow{PedidoID: e.Order.PedidoID, WindowStart: el.Window.Start}
				switch el.Fate {
				case stream.Accepted:
					fates[ai][ow], accepted = windowtest.Accepted, true
				case stream.TooLate:
					fates[ai][ow], dropped = windowtest.Dropped, true
				default:
					fail(i, e, "%s: element %+v", specs[ai].Name, el)
				}
			}
			if dropped && accepted {
				cov["order too late for some windows, on time for others"]++
			}
			cov["line without a SKU"] += len(out.SKUMissing)
		}
	}
	steps := r.steps(len(events), func(i int) bool { return events[i].Kind == windowtest.Deliver }, salt)
	for i, n := range steps {
		e, step := events[i], events[i:i+n]
		var want []window.Pane
		pushes := make([]stream.Push, n)
		for j, e := range step {
			want = append(want, model.Apply(e)...)
			pushes[j] = stream.Push{Delivery: Delivery(e), Now: e.Now}
		}
		before := make([]int, len(specs))
		for ai, s := range specs {
			before[ai] = len(r.panesOf(s.Name))
		}
		switch e.Kind {
		case windowtest.Deliver:
			var results []stream.Result
			var err error
			if n == 1 && !r.batches {
				var res stream.Result
				res, err = r.p.Handle(ctx, pushes[0].Delivery, e.Now)
				results = []stream.Result{res}
			} else {
				results, err = r.p.HandleBatch(ctx, pushes)
			}
			if err != nil {
				fail(i, e, "Handle of %d deliveries: %v", n, err)
			}
			for j, e := range step {
				checkDelivery(i+j, e, results[j])
			}
		case windowtest.Tick:
			res, err := r.p.Tick(ctx, e.Now)
			if err != nil {
				fail(i, e, "Tick: %v", err)
			}
			for ai, at := range res.Aggregations {
				if err := windowtest.CheckWatermark(specs[ai], ws[ai], at.Watermark, e.Now); err != nil {
					fail(i, e, "%s: %v", specs[ai].Name, err)
				}
				ws[ai] = at.Watermark
			}
		}
		for ai, s := range specs {
			if w := model.Watermark(s.Name); !w.Equal(ws[ai]) {
				fail(i, e, "%s: watermark %s, model %s", s.Name, ws[ai], w)
			}
		}
		var got []window.Pane
		for ai, s := range specs {
			got = append(got, r.panesOf(s.Name)[before[ai]:]...)
		}
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			fail(i, e, "panes differ after %d events (-model +processor):\n%s", n, diff)
		}
		cov.CountPanes(specs, got)

		res, err := r.again(ctx, e.Kind == windowtest.Tick, e.Now, pushes)
		if err != nil {
			fail(i, e, "%v", err)
		}
		for ai, at := range res.Aggregations {
			if !at.Watermark.Equal(ws[ai]) {
				fail(i, e, "%s: tick again moved W to %s (want %s)", specs[ai].Name, at.Watermark, ws[ai])
			}
		}
	}

	for ai, s := range specs {
		drops := r.drops(s.Name)
		cov["too-late drop"] += len(drops)
		if err := model.CheckAgainst(s.Name, r.panesOf(s.Name), drops, fates[ai], cfg); err != nil {
			t.Error(err)
		}
		if !cfg.Open {
			if n := r.open(s.Name); n != 0 {
				t.Errorf("%s: the closing tick left %d windows open", s.Name, n)
			}
		}
	}
	missing, err := r.sink.SKUMissing()
	if err != nil {
		t.Fatal(err)
	}
	var wantMissing []string
	for _, m := range model.SKUMissing() {
		wantMissing = append(wantMissing, fmt.Sprintf("%s|%s|%d", m.Aggregation, m.PedidoID, m.Line))
	}
	slices.Sort(wantMissing)
	if diff := cmp.Diff(wantMissing, missing, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("lines without a SKU (-model +processor):\n%s", diff)
	}
	r.sameInvalid(model.InvalidMessages())
	r.clean()
	if !cfg.Open && !model.Settled() {
		t.Fatal("the closing tick left changes un-emitted in the model")
	}
}
