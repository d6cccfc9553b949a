package streamtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// testHotKey sends HotKeyOrders orders into one window and key at once:
// none may be lost, and the EARLY pane that follows must hold their exact sum.
func testHotKey(t *testing.T, en env, f Features) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	ctx, cancel := context.WithTimeout(t.Context(), f.HotKeyTimeout)
	defer cancel()
	now := at("18:30")
	n := f.HotKeyOrders
	var want window.Measures
	events := make([]windowtest.MultiEvent, n)
	for i := range n {
		m := window.Measures{Importe: numeric.FromNanos(int64(i+1) * 10_000_000), Pedidos: 1, Unidades: int64(i%3 + 1)}
		events[i] = windowtest.MultiEvent{Kind: windowtest.Deliver, Now: now, MessageID: fmt.Sprintf("hot-%03d", i),
			Order: windowtest.SimpleOrder(fmt.Sprintf("P-hot-%03d", i), "ES", at("18:20").Add(time.Duration(i)*time.Second), m)}
		var err error
		if want, err = want.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	// sendAll delivers every event at once and wants each answered with fate.
	sendAll := func(after time.Duration, fate stream.Fate) error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, e := range events {
			wg.Go(func() {
				res, err := r.p.Handle(ctx, Delivery(e), e.Now.Add(after))
				if err == nil && res.Fate() != fate {
					err = fmt.Errorf("fate %s", res.Fate())
				}
				errs[i] = err
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	start := time.Now()
	if err := sendAll(0, stream.Accepted); err != nil {
		t.Fatalf("concurrent orders into one window and key: %v", err)
	}
	elapsed := time.Since(start)
	txs, runs, most := r.store.Contention()
	t.Logf("%d concurrent orders into one window and key in %v: %d transactions, %d runs, at most %d runs of one",
		n, elapsed, txs, runs, most)

	res, err := r.p.Tick(ctx, now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ps := res.Aggregations[0].Panes
	if len(ps) != 1 || ps[0].Timing != window.TimingEarly || ps[0].Measures != want {
		t.Fatalf("panes %+v, want one EARLY pane with %+v", ps, want)
	}
	// Redeliver them all at once: nothing may change.
	mark := r.store.Writes()
	if err := sendAll(time.Minute, stream.Duplicate); err != nil {
		t.Fatalf("concurrent redeliveries: %v", err)
	}
	if w := r.store.WritesSince(mark); len(w) > 0 {
		t.Errorf("redeliveries wrote %v", w)
	}
}

// testConcurrentTicks runs ticks at once with the leases out of the way,
// so that only the transactions keep them from emitting a pane twice.
func testConcurrentTicks(t *testing.T, en env, f Features) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	ctx := t.Context()
	model := windowtest.NewMulti(spec)
	s := &windowtest.Story{}
	var events []windowtest.MultiEvent
	for i, key := range []string{"ES", "FR", "PT"} {
		events = append(events,
			s.Deliver("18:30", fmt.Sprintf("P-a%d", i), key, "18:20", "10", 1),
			s.Deliver("18:31", fmt.Sprintf("P-b%d", i), key, "18:59", "2.5", 2),
			s.Deliver("18:32", fmt.Sprintf("P-c%d", i), key, "19:01", "7", 1))
	}
	slices.SortStableFunc(events, func(a, b windowtest.MultiEvent) int { return a.Now.Compare(b.Now) })
	for _, e := range events {
		model.Apply(e)
		if _, err := r.p.Handle(ctx, Delivery(e), e.Now); err != nil {
			t.Fatal(err)
		}
	}
	// Ticks from 18:34 on, two minutes apart, some at the same time.
	nows := make([]time.Time, f.ConcurrentTicks)
	for i := range nows {
		nows[i] = at("18:34").Add(time.Duration(i/2) * 2 * time.Minute)
	}
	r.store.IgnoreLeases(true)
	mark := r.store.Writes()
	var wg sync.WaitGroup
	errs := make([]error, len(nows))
	for i, now := range nows {
		wg.Go(func() {
			_, errs[i] = r.p.Tick(ctx, now)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent ticks: %v", err)
	}
	r.store.IgnoreLeases(false)
	for _, now := range nows {
		model.Apply(windowtest.MultiEvent{Kind: windowtest.Tick, Now: now})
	}
	// Close everything.
	end := nows[len(nows)-1].Add(spec.WindowSize + spec.AllowedLateness + spec.IdleTimeout + spec.OutOfOrderness + time.Hour)
	if _, err := r.p.Tick(ctx, end); err != nil {
		t.Fatal(err)
	}
	model.Apply(windowtest.MultiEvent{Kind: windowtest.Tick, Now: end})

	written := map[string]int{}
	rows := 0
	for _, w := range r.store.WritesSince(mark) {
		if isOutbox(w.Path) && !w.Delete {
			written[w.Path]++
			rows += w.Rows
		}
	}
	for p, n := range written {
		if n > 1 {
			t.Errorf("outbox document %s written %d times", p, n)
		}
	}
	panes := r.panes()
	if rows != len(panes) {
		t.Errorf("%d panes written to the outbox, %d reached the sink", rows, len(panes))
	}
	if err := model.CheckPanes(spec.Name, panes); err != nil {
		t.Errorf("invariants: %v", err)
	}
	if n := r.open(spec.Name); n != 0 {
		t.Errorf("%d windows left open", n)
	}
	r.noConflicts()
}

// testTickLease checks that a tick skips an aggregation whose lease another
// live tick holds, takes over an expired lease, and releases its own.
func testTickLease(t *testing.T, en env) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	ctx := t.Context()
	s := &windowtest.Story{}
	e := s.Deliver("18:30", "P-1", "ES", "18:25", "10", 1)
	if _, err := r.p.Handle(ctx, Delivery(e), e.Now); err != nil {
		t.Fatal(err)
	}
	// Another instance's tick, started at 18:31, still running.
	lease := "aggregations/" + spec.Name + "/control/lease"
	WriteDoc(t, r.store, docstore.Doc{Path: lease, Data: []byte(`{"holder":"other-instance","until":"` +
		at("18:31").Add(stream.TickLease).UTC().Format(time.RFC3339Nano) + `"}`)})
	mark := r.store.Writes()
	res, err := r.p.Tick(ctx, at("18:32"))
	if !errors.Is(err, stream.ErrTickBusy) || !res.Aggregations[0].Busy {
		t.Fatalf("tick while another holds the lease: %+v, %v; want ErrTickBusy", res, err)
	}
	if w := r.store.WritesSince(mark); len(w) > 0 {
		t.Errorf("a busy tick wrote %v", w)
	}
	// The other tick died: its lease runs out and this one takes over.
	res, err = r.p.Tick(ctx, at("18:31").Add(stream.TickLease))
	if err != nil || res.Aggregations[0].Busy || len(res.Aggregations[0].Panes) != 1 {
		t.Fatalf("tick after the lease ran out: %+v, %v; want the EARLY pane", res, err)
	}
	if d := ReadDoc(t, r.store, lease); d.Exists {
		t.Errorf("the tick did not release its lease: %s", d.Data)
	}
	// Released: a tick at the same time runs (and changes nothing).
	if res, err := r.p.Tick(ctx, at("18:31").Add(stream.TickLease)); err != nil || res.Aggregations[0].Busy {
		t.Errorf("tick after release: %+v, %v", res, err)
	}
}
