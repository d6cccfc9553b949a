package streamtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// coverage counts what the random streams exercised, by name (a pane
// timing, "streams" completed, ...), so that the property test fails if they
// stop producing the cases it exists for.
type coverage map[string]int

func (c coverage) check(t *testing.T, want ...string) {
	t.Helper()
	t.Logf("coverage: %v", c)
	for _, name := range want {
		if c[name] == 0 {
			t.Errorf("the streams never produced a %s", name)
		}
	}
}

func testProperty(t *testing.T, en env, f Features) {
	cov := coverage{}
	total := 0
	for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
		for _, lateDelay := range []time.Duration{time.Minute, 3 * time.Minute} {
			for seed := range uint64(f.Streams) {
				total++
				t.Run(fmt.Sprintf("%s/Ld=%s/seed=%d", mode, lateDelay, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^0x57ea))
					spec := windowtest.RandomSpec(r)
					spec.Accumulation, spec.LateDelay = mode, lateDelay
					cfg := windowtest.StreamConfig{Events: f.Events, Open: seed%5 == 4}
					runAgainstModel(t, newRig(t, en, spec), spec, windowtest.Stream(r, spec, cfg), cfg, cov)
				})
			}
		}
	}
	if cov["streams"] == total {
		cov.check(t, "EARLY", "ON_TIME", "LATE", "late pane batched by a tick", "final pane at expiry",
			"too-late drop", "duplicate", "invalid")
	}
}

// testPropertyDefaults runs the production spec, whose hour windows and two
// hours of lateness need longer streams to close.
func testPropertyDefaults(t *testing.T, en env, f Features) {
	cov := coverage{}
	for seed := range uint64(f.DefaultStreams) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xdefa))
			spec := window.Defaults()
			cfg := windowtest.StreamConfig{Events: 2 * f.Events}
			runAgainstModel(t, newRig(t, en, spec), spec, windowtest.Stream(r, spec, cfg), cfg, cov)
		})
	}
	if cov["streams"] == f.DefaultStreams {
		cov.check(t, "ON_TIME", "LATE")
	}
}

// runAgainstModel plays events through the processor and the model: after
// every step the sink holds exactly the model's panes and invariant 6 holds
// (again); at the end drops, fates, invalid messages and every invariant
// agree, and a closed stream leaves no state and an exact dashboard view.
func runAgainstModel(t *testing.T, r *rig, spec window.Spec, events []windowtest.Event, cfg windowtest.StreamConfig, cov coverage) {
	t.Helper()
	ctx := t.Context()
	model := windowtest.NewModel(spec)
	fates := map[string]windowtest.Fate{}
	invalidSeen := map[string]bool{}
	var w time.Time
	fail := func(i int, e windowtest.Event, format string, a ...any) {
		t.Helper()
		t.Fatalf("event %d %s at %s (message %s order %s %q): %s\nspec %+v",
			i, e.Kind, e.Now.Format(time.RFC3339Nano), e.MessageID, e.Order.ID, e.Invalid, fmt.Sprintf(format, a...), spec)
	}
	steps := r.steps(len(events), func(i int) bool { return events[i].Kind == windowtest.Deliver }, 0xba7c4)
	checkDelivery := func(i int, e windowtest.Event, res stream.Result) {
		t.Helper()
		if e.Invalid != "" {
			if !strings.HasPrefix(res.Invalid, "invalid: ") || res.Duplicate != invalidSeen[e.MessageID] {
				fail(i, e, "result %+v, want an invalid message (duplicate %v)", res, invalidSeen[e.MessageID])
			}
			if invalidSeen[e.MessageID] {
				cov["duplicate"]++
			} else {
				cov["invalid"]++
			}
			invalidSeen[e.MessageID] = true
			return
		}
		if res.Invalid != "" || len(res.Aggregations) != 1 {
			fail(i, e, "result %+v, want one aggregation's outcome", res)
		}
		out := res.Aggregations[0]
		prev, seen := fates[e.Order.ID]
		switch {
		case seen && (out.Fate != stream.Duplicate || out.Recorded != fateOf(prev)):
			fail(i, e, "outcome %+v, want a duplicate of %s", out, prev)
		case seen:
			cov["duplicate"]++
		case out.Fate == stream.Accepted:
			fates[e.Order.ID] = windowtest.Accepted
		case out.Fate == stream.TooLate:
			fates[e.Order.ID] = windowtest.Dropped
			cov["too-late drop"]++
		default:
			fail(i, e, "outcome %+v for the first delivery of %s", out, e.Order.ID)
		}
	}
	for i, n := range steps {
		e, step := events[i], events[i:i+n]
		var want []window.Pane
		pushes := make([]stream.Push, n)
		for j, e := range step {
			want = append(want, model.Apply(e)...)
			pushes[j] = stream.Push{Delivery: Delivery(e), Now: e.Now}
		}
		before := paneCount(r.sink)
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
			got := res.Aggregations[0].Watermark
			if err := windowtest.CheckWatermark(spec, w, got, e.Now); err != nil {
				fail(i, e, "%v", err)
			}
			w = got
		}
		if !model.Watermark().Equal(w) {
			fail(i, e, "watermark %s, model %s", w, model.Watermark())
		}
		got := r.panes()[before:]
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			fail(i, e, "panes differ after %d events (-model +processor):\n%s", n, diff)
		}
		cov.count(spec, got)

		res, err := r.again(ctx, e.Kind == windowtest.Tick, e.Now, pushes)
		if err != nil {
			fail(i, e, "%v", err)
		}
		if at := res.Aggregations; len(at) > 0 && !at[0].Watermark.Equal(w) {
			fail(i, e, "tick again moved W to %s (want %s)", at[0].Watermark, w)
		}
	}

	all := r.panes()
	if err := model.CheckPanes(all); err != nil {
		t.Fatalf("invariants: %v", err)
	}
	drops := r.drops(spec.Name)
	if diff := cmp.Diff(model.Drops(), drops); diff != "" {
		t.Errorf("drops differ (-model +processor):\n%s", diff)
	}
	if err := model.CheckDrops(drops); err != nil {
		t.Error(err)
	}
	if err := model.CheckFates(fates); err != nil {
		t.Error(err)
	}
	r.sameInvalid(model.InvalidMessages())
	r.clean()
	if !cfg.Open {
		if !model.Settled() {
			t.Fatal("the closing tick left changes un-emitted in the model")
		}
		if n := r.open(spec.Name); n != 0 {
			t.Errorf("the closing tick left %d windows open", n)
		}
		view, err := windowtest.View(all)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(model.Final(), view); diff != "" {
			t.Errorf("dashboard view differs from the sums of the accepted orders (-want +got):\n%s", diff)
		}
	}
	cov["streams"]++
}

func fateOf(f windowtest.Fate) stream.Fate {
	if f == windowtest.Dropped {
		return stream.TooLate
	}
	return stream.Accepted
}

func (c coverage) count(spec window.Spec, panes []window.Pane) {
	for _, p := range panes {
		c[string(p.Timing)]++
		switch {
		case p.Timing != window.TimingLate:
		case p.Watermark.Before(p.WindowEnd.Add(spec.AllowedLateness)):
			c["late pane batched by a tick"]++
		default:
			c["final pane at expiry"]++
		}
	}
}
