package streamtest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// play applies events to the processor and the model, returning the ticks'
// errors.
func (r *rig) play(t *testing.T, model *windowtest.Multi, events ...windowtest.MultiEvent) []error {
	t.Helper()
	var errs []error
	for i, e := range events {
		if _, _, err := r.step(t, model, i, e); e.Kind == windowtest.Tick {
			errs = append(errs, err)
		}
	}
	return errs
}

// step applies event i to the model (unless nil) and the processor: a
// delivery must be handled, a tick's error is returned.
func (r *rig) step(t *testing.T, model *windowtest.Multi, i int, e windowtest.MultiEvent,
) (stream.Result, stream.TickResult, error) {
	t.Helper()
	if model != nil {
		model.Apply(e)
	}
	if e.Kind == windowtest.Tick {
		res, err := r.p.Tick(t.Context(), e.Now)
		return stream.Result{}, res, err
	}
	res, err := r.p.Handle(t.Context(), Delivery(e), e.Now)
	if err != nil {
		t.Fatalf("event %d: Handle must succeed once the state is committed: %v", i, err)
	}
	return res, stream.TickResult{}, nil
}

// sameRows wants every aggregation's panes and drops, and the dead-lettered
// messages, the model's (a table's rows have no order).
func (r *rig) sameRows(t *testing.T, model *windowtest.Multi) {
	t.Helper()
	byOrder := cmpopts.SortSlices(func(a, b windowtest.Drop) bool {
		return cmp.Or(cmp.Compare(a.PedidoID, b.PedidoID), a.WindowStart.Compare(b.WindowStart)) < 0
	})
	for _, s := range r.specs {
		want, got := model.Panes(s.Name), r.panesOf(s.Name)
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("%s panes (-model +sink):\n%s", s.Name, diff)
		}
		if diff := gocmp.Diff(model.Drops(s.Name), r.drops(s.Name), byOrder); diff != "" {
			t.Errorf("%s drops (-model +sink):\n%s", s.Name, diff)
		}
	}
	r.sameInvalid(model.InvalidMessages())
}

// testSinkDown: the warehouse fails after the state commits; every pane,
// drop and dead letter waits in the outbox and the next tick appends it.
func testSinkDown(t *testing.T, en env) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	model := windowtest.NewMulti(spec)
	s := &windowtest.Story{}
	r.play(t, model, s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1))

	r.sink.SetFailing(true)
	errs := r.play(t, model, tick("18:32")) // EARLY pane, sink down
	if errs[0] == nil {
		t.Error("tick with the sink down reported success")
	}
	r.play(t, model, tick("20:40"))                                                    // ON_TIME, sink down
	r.play(t, model, s.Deliver("20:41", "P-2", "ES", "18:50", "50", 2), tick("20:42")) // LATE, sink down
	r.play(t, model, tick("21:15"), s.Deliver("21:16", "P-3", "ES", "18:55", "30", 1)) // expiry, then too late
	bad := windowtest.MultiEvent{Kind: windowtest.Deliver, Now: at("21:17"), MessageID: "m-bad", Order: windowtest.SimpleOrder("X-1", "ES", at("21:17"), window.Measures{}), Invalid: "invalid: bad JSON"}
	r.play(t, model, bad)
	if n := paneCount(r.sink) + discardCount(r.sink); n != 0 {
		t.Fatalf("the sink is down but holds %d rows", n)
	}
	if n := r.outbox(); n != 5 {
		t.Errorf("%d rows in the outbox, want 3 panes, 1 drop and 1 dead letter", n)
	}

	r.sink.SetFailing(false) // the sink came back
	res2 := tickOK(t, r, "21:18")
	if res2.Aggregations[0].Flushed != 4 || res2.DeadLetters != 1 {
		t.Errorf("tick flushed %d rows and %d dead letters, want 4 and 1", res2.Aggregations[0].Flushed, res2.DeadLetters)
	}
	r.sameRows(t, model)
	r.sameInvalid([]string{"m-bad"})
	r.clean()
}

// testCrashBeforeOutboxDelete: the process dies after the sink took the rows
// and before the outbox documents are deleted. The next tick appends them
// again; the sink sees the same identities and nothing visible doubles.
func testCrashBeforeOutboxDelete(t *testing.T, en env) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	model := windowtest.NewMulti(spec)
	s := &windowtest.Story{}
	r.store.FailDeletes(isOutbox)
	r.play(t, model,
		s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1),
		s.Deliver("18:31", "P-2", "FR", "18:26", "20", 1))
	errs := r.play(t, model, tick("18:33"))
	if errs[0] == nil {
		t.Error("tick that could not clear its outbox reported success")
	}
	r.play(t, model, tick("20:40"), s.Deliver("20:41", "P-3", "ES", "18:50", "50", 2))
	if n := r.outbox(); n == 0 {
		t.Fatal("the outbox was cleared although deletes fail")
	}
	r.store.FailDeletes(nil)
	tickOK(t, r, "20:42")
	model.Apply(tick("20:42"))
	if r.sink.Repeats() == 0 {
		t.Error("no row was appended twice: the crash was not simulated")
	}
	r.sameRows(t, model)
	r.clean()
}

// testRandomFaults plays random streams while the sink and the outbox
// deletes fail at random; once both heal, one tick later the sink holds
// exactly the model's panes, drops and dead letters.
func testRandomFaults(t *testing.T, en env, f Features) {
	for seed := range uint64(f.FaultStreams) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r0 := rand.New(rand.NewPCG(seed, 0xfa17))
			spec := windowtest.RandomSpec(r0)
			events := windowtest.Stream(r0, spec, windowtest.StreamConfig{Events: f.Events})
			r := newRig(t, en, spec)
			var mu sync.Mutex
			faults := rand.New(rand.NewPCG(seed, 0xbad))
			flip := func() bool { mu.Lock(); defer mu.Unlock(); return faults.IntN(10) < 3 }
			r.sink.failIf = func() bool { return flip() }
			r.store.FailDeletes(func(p string) bool { return isOutbox(p) && flip() })
			model := windowtest.NewMulti(spec)
			var w time.Time
			for i, e := range events {
				_, res, _ := r.step(t, model, i, e) // a tick's errors: work left for the next tick
				if e.Kind != windowtest.Tick {
					continue
				}
				if got := res.Aggregations[0].Watermark; !got.Equal(model.Watermark(spec.Name)) {
					t.Fatalf("event %d: W %s, model %s", i, got, model.Watermark(spec.Name))
				}
				w = model.Watermark(spec.Name)
			}
			r.sink.failIf = nil
			r.store.FailDeletes(nil)
			last := events[len(events)-1].Now
			if _, err := r.p.Tick(t.Context(), last); err != nil {
				t.Fatalf("healed tick: %v", err)
			}
			model.Apply(windowtest.MultiEvent{Kind: windowtest.Tick, Now: last})
			if !model.Watermark(spec.Name).Equal(w) {
				t.Fatalf("the model moved on a repeated tick")
			}
			r.sameRows(t, model)
			if r.sink.Repeats() == 0 {
				t.Error("no row was appended twice: the faults did not bite")
			}
			r.clean()
		})
	}
}

// testTwoAggregations feeds one stream to two aggregations with different
// windows and modes: each must match its own model, and an
// invalid message is dead-lettered once.
func testTwoAggregations(t *testing.T, en env, f Features) {
	a := window.Defaults()
	a.WindowSize, a.AllowedLateness = 10*time.Minute, 30*time.Minute
	b := a
	b.Name, b.WindowSize, b.Accumulation, b.LateDelay = "ventas_7min_pais", 7*time.Minute, window.Discarding, 2*time.Minute
	r := newRig(t, en, a, b)
	model := windowtest.NewMulti(a, b)
	events := windowtest.Stream(rand.New(rand.NewPCG(7, 7)), a, windowtest.StreamConfig{Events: f.Events})
	for i, e := range events {
		res, tr, err := r.step(t, model, i, e)
		switch {
		case err != nil:
			t.Fatalf("event %d: %v", i, err)
		case e.Kind == windowtest.Deliver && e.Invalid == "" && (len(res.Aggregations) != 2 ||
			res.Aggregations[0].Aggregation != a.Name || res.Aggregations[1].Aggregation != b.Name):
			t.Fatalf("event %d: outcomes %+v, want one per aggregation", i, res.Aggregations)
		case e.Kind == windowtest.Tick:
			wa, wb := tr.Aggregations[0].Watermark, tr.Aggregations[1].Watermark
			if !wa.Equal(model.Watermark(a.Name)) || !wb.Equal(model.Watermark(b.Name)) {
				t.Fatalf("event %d: watermarks %s, %s; model %s, %s", i, wa, wb,
					model.Watermark(a.Name), model.Watermark(b.Name))
			}
		}
	}
	r.sameRows(t, model)
}

// testRestartWhileOpen replaces the processor (a new revision) while a
// window is open: the orders taken by either process add up exactly.
func testRestartWhileOpen(t *testing.T, en env) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	model := windowtest.NewMulti(spec)
	s := &windowtest.Story{}
	for i := range 6 {
		r.play(t, model, s.Deliver("18:30", fmt.Sprintf("P-old-%d", i), "ES", "18:20", "1.5", 1))
	}
	p2, err := stream.New(r.store, r.sink, []window.Spec{spec}, IsCountry, testLogger(t), r.opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.p = p2
	for i := range 12 {
		r.play(t, model,
			s.Deliver("18:31", fmt.Sprintf("P-new-%d", i), "ES", "18:21", "2", 1),
			s.Deliver("18:31", fmt.Sprintf("P-fr-%d", i), "FR", "18:21", "3", 1))
	}
	end := at("18:31").Add(5 * time.Hour)
	r.play(t, model, tick(end.In(spain).Format("15:04:05")))
	view, err := windowtest.View(r.panes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(model.Final(spec.Name), view); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}
