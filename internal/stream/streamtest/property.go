package streamtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// coverage counts what the random streams exercised, so that the property
// test fails if they stop producing the cases it exists for.
type coverage struct {
	mu          sync.Mutex
	streams     int
	timings     map[window.Timing]int
	lateBatched int // LATE panes emitted by a tick before expiry (Ld > 0)
	expiryFlush int // final LATE panes at expiry
	drops       int
	duplicates  int
	invalid     int
}

func (c *coverage) add(o *coverage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timings == nil {
		c.timings = map[window.Timing]int{}
	}
	c.streams += o.streams
	for k, v := range o.timings {
		c.timings[k] += v
	}
	c.lateBatched += o.lateBatched
	c.expiryFlush += o.expiryFlush
	c.drops += o.drops
	c.duplicates += o.duplicates
	c.invalid += o.invalid
}

func (c *coverage) check(t *testing.T, want map[string]bool) {
	t.Helper()
	t.Logf("coverage: %d streams, timings %v, late batched %d, expiry %d, drops %d, duplicates %d, invalid %d",
		c.streams, c.timings, c.lateBatched, c.expiryFlush, c.drops, c.duplicates, c.invalid)
	got := map[string]int{
		"EARLY": c.timings[window.TimingEarly], "ON_TIME": c.timings[window.TimingOnTime], "LATE": c.timings[window.TimingLate],
		"late pane batched by a tick": c.lateBatched,
		"final pane at expiry":        c.expiryFlush, "too-late drop": c.drops, "duplicate": c.duplicates, "invalid": c.invalid,
	}
	for name := range want {
		if got[name] == 0 {
			t.Errorf("the streams never produced a %s", name)
		}
	}
}

func testProperty(t *testing.T, en env, f Features) {
	var cov coverage
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
					events := windowtest.Stream(r, spec, cfg)
					var c coverage
					runAgainstModel(t, newRig(t, en, spec), spec, events, cfg, &c)
					cov.add(&c)
				})
			}
		}
	}
	if cov.streams == total {
		cov.check(t, map[string]bool{"EARLY": true, "ON_TIME": true, "LATE": true,
			"late pane batched by a tick": true, "final pane at expiry": true, "too-late drop": true, "duplicate": true, "invalid": true})
	}
}

// testPropertyDefaults runs the production spec, whose hour windows and two
// hours of lateness need longer streams to close.
func testPropertyDefaults(t *testing.T, en env, f Features) {
	var cov coverage
	for seed := range uint64(f.DefaultStreams) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xdefa))
			spec := window.Defaults()
			cfg := windowtest.StreamConfig{Events: 2 * f.Events}
			var c coverage
			runAgainstModel(t, newRig(t, en, spec), spec, windowtest.Stream(r, spec, cfg), cfg, &c)
			cov.add(&c)
		})
	}
	if cov.streams == f.DefaultStreams {
		cov.check(t, map[string]bool{"ON_TIME": true, "LATE": true})
	}
}

// runAgainstModel plays events through the processor and the model and
// checks, after every event, that the sink received exactly the model's
// panes and that handling the message again, or running the tick again,
// commits nothing but the tick lease and appends nothing; at the end, that
// drops, fates, invalid messages and every invariant agree, and that a
// closed stream leaves no state and an exact dashboard view.
func runAgainstModel(t *testing.T, r *rig, spec window.Spec, events []windowtest.Event, cfg windowtest.StreamConfig, cov *coverage) {
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
	// Batches of consecutive deliveries, when the rig asks for them: random
	// sizes from one to eight, so that duplicates, late corrections and drops
	// of one (window, key) share a batch.
	batchRand := rand.New(rand.NewPCG(uint64(len(events)), 0xba7c4))
	checkDelivery := func(i int, e windowtest.Event, res stream.Result) {
		t.Helper()
		if e.Invalid != "" {
			if !strings.HasPrefix(res.Invalid, "invalid: ") || res.Duplicate != invalidSeen[e.MessageID] {
				fail(i, e, "result %+v, want an invalid message (duplicate %v)", res, invalidSeen[e.MessageID])
			}
			if invalidSeen[e.MessageID] {
				cov.duplicates++
			} else {
				cov.invalid++
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
			cov.duplicates++
		case out.Fate == stream.Accepted:
			fates[e.Order.ID] = windowtest.Accepted
		case out.Fate == stream.TooLate:
			fates[e.Order.ID] = windowtest.Dropped
			cov.drops++
		default:
			fail(i, e, "outcome %+v for the first delivery of %s", out, e.Order.ID)
		}
	}
	for i := 0; i < len(events); {
		e := events[i]
		n := 1 // events handled in this step
		if e.Kind == windowtest.Deliver && r.batches {
			for size := 1 + batchRand.IntN(8); n < size && i+n < len(events) && events[i+n].Kind == windowtest.Deliver; n++ {
			}
		}
		step := events[i : i+n]
		var want []window.Pane
		for _, e := range step {
			want = append(want, model.Apply(e)...)
		}
		before := paneCount(r.sink)
		switch e.Kind {
		case windowtest.Deliver:
			pushes := make([]stream.Push, n)
			for j, e := range step {
				pushes[j] = stream.Push{Delivery: Delivery(e), Now: e.Now}
			}
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
		got, err := r.sink.PanesFrom(spec.KeyField, before)
		if err != nil {
			fail(i, e, "%v", err)
		}
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			fail(i, e, "panes differ after %d events (-model +processor):\n%s", n, diff)
		}
		cov.count(spec, e, got)

		// Invariant 6: the same messages again, or the same tick again.
		mark, panes, discards := r.store.Writes(), paneCount(r.sink), discardCount(r.sink)
		switch e.Kind {
		case windowtest.Deliver:
			pushes := make([]stream.Push, n)
			for j, e := range step {
				pushes[j] = stream.Push{Delivery: Delivery(e), Now: e.Now}
			}
			results, err := r.p.HandleBatch(ctx, pushes)
			if err != nil {
				fail(i, e, "Handle again: %v", err)
			}
			for _, res := range results {
				if dup := res.Duplicate || (len(res.Aggregations) == 1 && res.Aggregations[0].Fate == stream.Duplicate); !dup {
					fail(i, e, "redelivery handled as %+v, want a duplicate", res)
				}
			}
		case windowtest.Tick:
			res, err := r.p.Tick(ctx, e.Now)
			if err != nil {
				fail(i, e, "Tick again: %v", err)
			}
			if n := len(res.Aggregations[0].Panes); n > 0 || !res.Aggregations[0].Watermark.Equal(w) {
				fail(i, e, "tick again emitted %d panes, W %s (want %s)", n, res.Aggregations[0].Watermark, w)
			}
		}
		var writes []Write
		for _, w := range r.store.WritesSince(mark) {
			if !isLease(w.Path) {
				writes = append(writes, w)
			}
		}
		if len(writes) > 0 || paneCount(r.sink) != panes || discardCount(r.sink) != discards {
			fail(i, e, "repeating it wrote %v, %d panes and %d discards", writes,
				paneCount(r.sink)-panes, discardCount(r.sink)-discards)
		}
		i += n
	}

	all := r.panes(spec.KeyField)
	if err := model.CheckPanes(all); err != nil {
		t.Fatalf("invariants: %v", err)
	}
	drops, err := r.sink.Drops(spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(model.Drops(), drops); diff != "" {
		t.Errorf("drops differ (-model +processor):\n%s", diff)
	}
	if err := model.CheckDrops(drops); err != nil {
		t.Error(err)
	}
	if err := model.CheckFates(fates); err != nil {
		t.Error(err)
	}
	inv, err := r.sink.InvalidMessages()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(inv)
	if diff := cmp.Diff(model.InvalidMessages(), inv); diff != "" {
		t.Errorf("dead-lettered messages (-model +processor):\n%s", diff)
	}
	if n := r.outbox(); n != 0 {
		t.Errorf("%d rows left in the outbox", n)
	}
	r.noConflicts()
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
	cov.streams++
}

func fateOf(f windowtest.Fate) stream.Fate {
	if f == windowtest.Dropped {
		return stream.TooLate
	}
	return stream.Accepted
}

func (c *coverage) count(spec window.Spec, e windowtest.Event, panes []window.Pane) {
	if c.timings == nil {
		c.timings = map[window.Timing]int{}
	}
	for _, p := range panes {
		c.timings[p.Timing]++
		switch {
		case p.Timing != window.TimingLate:
		case p.Watermark.Before(p.WindowEnd.Add(spec.AllowedLateness)):
			c.lateBatched++
		default:
			c.expiryFlush++
		}
	}
}
