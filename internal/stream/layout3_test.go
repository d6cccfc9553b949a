package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestQuietTickWritesOnlyLeases: a tick that finds no new order and no
// timer due writes nothing but its leases, whether it repeats the previous
// tick's now or comes later while W has no reason to move (not idle yet,
// nothing pending); a tick writing more would cost a write per aggregation
// every minute for nothing. Its reads are pinned too.
func TestQuietTickWritesOnlyLeases(t *testing.T) {
	tests := []struct {
		name string
		next time.Time // the quiet tick, after one at 17:22
	}{
		{"the same tick again", at(17, 22)},
		{"a minute later", at(17, 23)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := streamtest.NewRecorder(newBoltStore(t))
			hora, sku := window.Defaults(), skuSpec()
			p := newProcessor(t, st, streamtest.NewSink(), hora, sku)
			for i, pais := range []string{"ES", "FR", "ES"} {
				id := fmt.Sprintf("Q-%d", i)
				mustHandle(t, p, orderDelivery(id, pais, "5.00", at(17, 5+i)), at(17, 20))
			}
			// 17:21: the orders folded; 17:22: the EARLY panes.
			for _, now := range []time.Time{at(17, 21), at(17, 22)} {
				mustTick(t, p, now)
			}
			mark := st.Writes()
			st.TakeCost()
			tr := mustTick(t, p, tt.next)
			var got []string
			for _, w := range st.WritesSince(mark) {
				got = append(got, w.String())
			}
			if diff := cmp.Diff(leaseWrites(hora, sku), got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("writes of a quiet tick (-want +got):\n%s", diff)
			}
			// Per aggregation: lease taken and given back, fold state and a
			// fold that changes nothing (fold + control each); once: control
			// and the advance (W unchanged: no write). Queries: the outboxes
			// and the open generation, all empty.
			want := cost{Transactions: 10, Reads: 14, Writes: 4, Queries: 4}
			if diff := cmp.Diff(want, st.TakeCost()); diff != "" {
				t.Errorf("cost of a quiet tick (-want +got):\n%s", diff)
			}
			for _, a := range tr.Aggregations {
				if len(a.Panes) != 0 || a.Records != 0 {
					t.Errorf("%s: quiet tick emitted %d panes from %d records", a.Aggregation, len(a.Panes), a.Records)
				}
			}
		})
	}
}

func leaseWrites(specs ...window.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, "set aggregations/"+s.Name+"/control/lease")
	}
	for _, s := range specs {
		out = append(out, "delete aggregations/"+s.Name+"/control/lease")
	}
	return out
}

// TestTickReadsBounded: with n windows open (ON_TIME emitted, kept by a
// long allowed lateness) and one new order, a tick costs the same whatever
// n: its fold reads the fold document (the agenda) and the new order's
// window only.
//
// 8 transactions: lease taken (1 read, 1 write), fold state (fold +
// control), control, closing the open generation (1, 1), the advance (1, 1:
// W moved, which closes one more generation), the fold (fold + control +
// the window's part; writes the part, the pane's outbox document and the
// fold document), the outbox row's deletion (1 write), lease given back
// (1, 1): 10 reads, 8 writes. 5 queries: the two outboxes (empty), the open
// generation before and after closing it (the new order's record each
// time) and the generation the advance closed (empty).
func TestTickReadsBounded(t *testing.T) {
	want := cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 2}
	for _, open := range []int{3, 40, 150} {
		t.Run(fmt.Sprintf("%d open windows", open), func(t *testing.T) {
			c, tr, _ := tickCost(t, window.Defaults(), open, 1, func(i int, event time.Time) order.Delivery {
				return orderDelivery(fmt.Sprintf("H-%d", i), "ES", "1.00", event)
			}, func(i int, event time.Time) order.Delivery {
				return orderDelivery(fmt.Sprintf("N-%d", i), "ES", "2.00", event)
			})
			if got := tr.Aggregations[0].OpenWindows; got != open {
				t.Fatalf("%d open windows before the fold, want %d", got, open)
			}
			if got := len(tr.Aggregations[0].Panes); got != 1 {
				t.Fatalf("%d panes, want the new order's EARLY pane", got)
			}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("cost of a tick with %d open windows and 1 new order (-want +got):\n%s", open, diff)
			}
		})
	}
}

// tickCost builds n open windows of aggregation s (ON_TIME emitted, kept by
// a long allowed lateness), opening(i, event) the order of the i-th, then
// handles orders next(i, event) and measures the next tick.
func tickCost(t *testing.T, s window.Spec, n, orders int, opening, next func(i int, event time.Time) order.Delivery,
	opts ...stream.Option,
) (cost, stream.TickResult, docstore.Store) {
	t.Helper()
	st := streamtest.NewRecorder(newBoltStore(t))
	s.AllowedLateness = 1000 * time.Hour
	p := newProcessorWith(t, st, streamtest.NewSink(), []window.Spec{s}, opts...)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := base.Add(time.Duration(n)*time.Hour + 20*time.Minute)
	var pushes []stream.Push
	for i := range n {
		event := base.Add(time.Duration(i)*time.Hour + 5*time.Minute)
		pushes = append(pushes, stream.Push{Now: now, Delivery: opening(i, event)})
	}
	mustHandleBatch(t, p, pushes)
	// Idle: W = now - D passes every window's end; all emit ON_TIME.
	now = now.Add(10 * time.Minute)
	mustTick(t, p, now)
	ev := now.Add(2 * time.Minute)
	pushes = pushes[:0]
	for i := range orders {
		event := ev.Add(time.Duration(i) * time.Millisecond)
		pushes = append(pushes, stream.Push{Now: ev.Add(time.Minute), Delivery: next(i, event)})
	}
	for _, r := range mustHandleBatch(t, p, pushes) {
		if r.Fate() != stream.Accepted {
			t.Fatalf("%+v", r)
		}
	}
	st.TakeCost()
	tr := mustTick(t, p, ev.Add(2*time.Minute))
	if f := tr.Aggregations[0].Failing; len(f) > 0 {
		t.Fatalf("failing: %+v", f)
	}
	return st.TakeCost(), tr, st.Store
}

// TestLateOrderWhileFoldBehind: W advanced past a window's end but the fold
// of that advance failed. The panes that fold computed never committed, so
// none may reach the warehouse (the next fold reuses their index). A late
// order then is accepted, and the next tick emits the pane with every order
// in it, once.
func TestLateOrderWhileFoldBehind(t *testing.T) {
	ctx := context.Background()
	hora := window.Defaults()
	st := streamtest.NewRecorder(newBoltStore(t))
	sink := streamtest.NewSink()
	p := newProcessor(t, st, sink, hora)
	mustHandle(t, p, orderDelivery("A", "ES", "10.00", at(17, 5)), at(17, 10))
	mustTick(t, p, at(17, 12))
	failAfter(st, "aggregations/"+hora.Name+"/control/fold", 0)
	if _, err := p.Tick(ctx, at(18, 15)); !errors.Is(err, streamtest.ErrInjected) {
		t.Fatalf("tick with its fold failing: %v, want the injected error", err)
	}
	st.FailSets(nil)
	if n := sink.Count(stream.PanesTable(hora.Name)); n != 1 {
		t.Errorf("%d panes in the warehouse after a fold that did not commit, want only the EARLY one before it", n)
	}
	res := mustHandle(t, p, orderDelivery("B", "ES", "2.00", at(17, 30)), at(18, 16))
	if o := res.Aggregations[0]; o.Fate != stream.Accepted || o.Lateness != window.Late {
		t.Fatalf("late order while the fold is behind: %+v, want accepted late, its correction left to the fold", o)
	}
	mustTick(t, p, at(18, 17))
	if c := sink.Conflicts(); len(c) != 0 {
		t.Errorf("two different panes under one identity: %v", c)
	}
	type pane struct {
		Index   int64
		Importe string
		Pedidos int64
	}
	var got []pane
	ps, err := sink.PanesOf(hora)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		got = append(got, pane{p.Index, p.Measures.Importe.String(), p.Measures.Pedidos})
	}
	// EARLY with A; then, once the fold runs, the pane after it holds A
	// and B (its timing is the fold's: W passed the end before it ran).
	want := []pane{{0, "10", 1}, {1, "12", 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("panes in the warehouse (-want +got):\n%s", diff)
	}
}

// skuOrder is an order with one line of 1.00 per SKU.
func skuOrder(id string, event time.Time, skus []string) order.Delivery {
	var lines []string
	for _, s := range skus {
		lines = append(lines, `{"sku":"`+s+`","cantidad":1,"precio_unitario":"1.00"}`)
	}
	return delivery(id, event, `"pais":"ES","importe_total":"1.00","lineas":[`+strings.Join(lines, ",")+`]`)
}

func skus(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("S%04d", i))
	}
	return out
}

// TestFoldSplitsWindowState: a window's state splits by key hash once a
// document would pass 256 KiB, and every later fold reads every part: each
// key's next pane continues its index with every order in it.
func TestFoldSplitsWindowState(t *testing.T) {
	ctx := context.Background()
	st := newBoltStore(t)
	sink := streamtest.NewSink()
	s := window.Defaults()
	s.Name, s.KeyField = "ventas_sku_hora", stream.KeySKU
	p := newProcessor(t, st, sink, s)
	// 800 keys: one state document of about 210 KB.
	if res, err := p.Handle(ctx, skuOrder("A", at(17, 5), skus(0, 800)), at(17, 10)); err != nil || res.Fate() != stream.Accepted {
		t.Fatalf("%v %v", res.Fate(), err)
	}
	if tr, err := p.Tick(ctx, at(18, 15)); err != nil || len(tr.Aggregations[0].Panes) != 800 {
		t.Fatalf("tick: %v, want 800 ON_TIME panes", err)
	}
	parts := func() int {
		ds, err := st.List(ctx, "aggregations/"+s.Name+"/state")
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	if n := parts(); n != 1 {
		t.Fatalf("%d state documents for 800 keys, want 1", n)
	}
	// 250 more keys, late: the next tick writes their LATE panes and the
	// window's state, now past 256 KiB: split in two.
	if res, err := p.Handle(ctx, skuOrder("B", at(17, 30), skus(800, 1050)), at(18, 16)); err != nil || res.Fate() != stream.Accepted {
		t.Fatalf("late order: %v %v", res.Fate(), err)
	}
	if tr, err := p.Tick(ctx, at(18, 17)); err != nil || len(tr.Aggregations[0].Panes) != 250 {
		t.Fatalf("tick: %v, want 250 LATE panes", err)
	}
	if n := parts(); n != 2 {
		t.Fatalf("%d state documents for 1050 keys, want 2", n)
	}
	// A late order for each of some keys of the first order and of the
	// second: each key's pane continues its index with both its orders.
	type pane struct {
		Key     string
		Index   int64
		Pedidos int64
	}
	var got, want []pane
	for _, k := range append(skus(0, 10), skus(800, 810)...) {
		mustHandle(t, p, skuOrder("C-"+k, at(17, 40), []string{k}), at(18, 17))
		want = append(want, pane{k, 1, 2}) // ON_TIME or LATE 0 before
	}
	tr := mustTick(t, p, at(18, 18))
	for _, pn := range tr.Aggregations[0].Panes {
		got = append(got, pane{pn.Key, pn.Index, pn.Measures.Pedidos})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LATE panes after the split (-want +got):\n%s", diff)
	}
	if n := tr.Aggregations[0].FailingCells; n != 0 {
		t.Errorf("%d failing windows after the split", n)
	}
	if c := sink.Conflicts(); len(c) != 0 {
		t.Errorf("%d pane identities appended with different rows, the first: %.300s", len(c), c[0])
	}
}
