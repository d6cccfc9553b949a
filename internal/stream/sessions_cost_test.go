package stream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// customerDelivery is an order of customer cliente with one line.
func customerDelivery(id, cliente string, event time.Time) order.Delivery {
	return delivery(id, event, `"cliente_id":"`+cliente+
		`","pais":"ES","importe_total":"1.00","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"1.00"}]`)
}

// TestSessionTickCost: the figures the package comment gives for session
// windows. A tick's fold reads and writes the parts that hold the keys its
// new orders touch and the parts due, each at most once: the cost does not
// grow with the customers holding open sessions, the parts they take, or a
// hot customer's orders (only the listing of the closed generation does);
// new orders of every open customer cost one read and one write per part.
//
// The count is TestTickReadsBounded's, the part in place of the window's:
// 10 reads, 8 writes. Late orders of 150 customers over 8 parts: 8 part
// reads and writes in 2 fold transactions of 4 parts (the second reads fold
// and control again and writes its own outbox document): 19 reads, 18
// writes.
func TestSessionTickCost(t *testing.T) {
	one := cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 2}
	listed := func(c cost, n int) cost { c.Listed = n; return c }
	tests := []struct {
		name         string
		open, orders int
		hot          bool // the orders are one new customer's, else late ones of each open customer, extending its session
		partBytes    int  // 0: the default
		wantParts    int
		want         cost
	}{
		{"3 open customers, 1 order", 3, 1, true, 0, 1, one},
		{"150 open customers, 1 order", 150, 1, true, 0, 1, one},
		{"3 open customers, a hot customer's 1000 orders", 3, 1000, true, 0, 1, listed(one, 1001)},
		{"150 open customers in 8 parts, 1 order", 150, 1, true, 6 << 10, 8, one},
		{"150 open customers in 8 parts, a hot customer's 1000 orders", 150, 1000, true, 6 << 10, 8, listed(one, 1001)},
		{"150 open customers in 8 parts, an order of each", 150, 150, false, 6 << 10, 8,
			cost{Transactions: 9, Reads: 19, Writes: 18, Queries: 5, Listed: 151}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []stream.Option
			if tt.partBytes > 0 {
				opts = append(opts, stream.WithSessionPartBytes(tt.partBytes))
			}
			s := windowtest.SessionSpec()
			c, tr, st := tickCost(t, s, tt.open, tt.orders, func(i int, event time.Time) order.Delivery {
				return customerDelivery(fmt.Sprintf("Q-%d", i), fmt.Sprintf("C-%d", i), event)
			}, func(i int, event time.Time) order.Delivery {
				if tt.hot {
					return customerDelivery(fmt.Sprintf("HOT-%d", i), "C-HOT", event)
				}
				opened := time.Date(2026, 3, 1, i, 5, 0, 0, time.UTC) // tickCost's i-th
				return customerDelivery(fmt.Sprintf("N-%d", i), fmt.Sprintf("C-%d", i), opened.Add(time.Minute))
			}, opts...)
			at := tr.Aggregations[0]
			if at.OpenWindows != tt.open {
				t.Errorf("%d keys on the agenda before the fold, want %d", at.OpenWindows, tt.open)
			}
			wantPanes, perPane, timing := tt.orders, 2, window.TimingLate
			if tt.hot {
				wantPanes, perPane, timing = 1, tt.orders, window.TimingEarly
			}
			if len(at.Panes) != wantPanes {
				t.Fatalf("%d panes, want %d", len(at.Panes), wantPanes)
			}
			for _, pn := range at.Panes {
				if pn.Measures.Pedidos != int64(perPane) || pn.Timing != timing {
					t.Fatalf("pane %+v, want a %s pane of %d orders", pn, timing, perPane)
				}
			}
			if diff := cmp.Diff(tt.want, c); diff != "" {
				t.Errorf("cost of a tick (-want +got):\n%s", diff)
			}
			parts, err := st.List(context.Background(), "aggregations/"+s.Name+"/sessions")
			if err != nil || len(parts) != tt.wantParts {
				t.Errorf("%d part documents (%v), want %d", len(parts), err, tt.wantParts)
			}
		})
	}
}

// TestSessionFoldInterrupted: a fold over more parts than one transaction
// rewrites that stops between two of them adds nothing twice at the next
// tick (newer W, more generations): each part says which generation is in.
func TestSessionFoldInterrupted(t *testing.T) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	fs := streamtest.NewRecorder(newBoltStore(t))
	sink := streamtest.NewSink()
	p := newProcessorWith(t, fs, sink, []window.Spec{s}, stream.WithSessionPartBytes(4<<10))
	const customers = 200
	ev := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	handle := func(n int, event, now time.Time) {
		t.Helper()
		var pushes []stream.Push
		for i := range customers {
			pushes = append(pushes, stream.Push{Now: now,
				Delivery: customerDelivery(fmt.Sprintf("P-%d-%d", n, i), fmt.Sprintf("C-%d", i), event)})
		}
		mustHandleBatch(t, p, pushes)
	}
	handle(1, ev, ev.Add(time.Minute))
	mustTick(t, p, ev.Add(2*time.Minute))
	handle(2, ev.Add(time.Minute), ev.Add(2*time.Minute))
	failAfter(fs, "aggregations/"+s.Name+"/control/fold", 1)
	if _, err := p.Tick(ctx, ev.Add(3*time.Minute)); err == nil {
		t.Fatal("the tick whose second fold transaction failed reported no error")
	}
	fs.FailSets(nil)
	// Idle by now: W moves, and the fold covers one generation more.
	for _, now := range []time.Time{ev.Add(20 * time.Minute), ev.Add(4 * time.Hour)} {
		mustTick(t, p, now)
	}
	view := viewOf(t, sink, s)
	if len(view) != customers {
		t.Fatalf("%d sessions in the view, want %d", len(view), customers)
	}
	for wk, m := range view {
		if m.Pedidos != 2 {
			t.Errorf("session of %s: %d pedidos, want 2", wk.Key, m.Pedidos)
		}
	}
}

// TestSessionStatus: Status lists every open session of every key, with
// its current extent and pane bookkeeping.
func TestSessionStatus(t *testing.T) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	p := newProcessor(t, newBoltStore(t), streamtest.NewSink(), s)
	at := func(m int) time.Time { return time.Date(2026, 3, 14, 17, m, 0, 0, time.UTC) }
	for i, d := range []order.Delivery{
		customerDelivery("P-1", "C-1", at(0)), customerDelivery("P-2", "C-1", at(20)), customerDelivery("P-3", "C-2", at(5)),
	} {
		mustHandle(t, p, d, at(21+i))
	}
	mustTick(t, p, at(25))
	st, err := p.Status(ctx, at(25))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range st[0].OpenWindows {
		got = append(got, fmt.Sprintf("%s %s-%s panes %d %s", w.Key, w.Start.Format("15:04"), w.End.Format("15:04"), w.Panes, w.OnTime))
	}
	want := []string{"C-1 17:00-17:50 panes 1 PENDING", "C-2 17:05-17:35 panes 1 PENDING"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("open sessions (-want +got):\n%s", diff)
	}
}

// TestSessionKeyPoisoned: a part that cannot be read fails its keys only;
// its orders meanwhile are parked, and added once when it reads again.
// Parts of 1 KiB and six more customers put C-1 and C-2 apart.
func TestSessionKeyPoisoned(t *testing.T) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	st := newBoltStore(t)
	sink := streamtest.NewSink()
	p := newProcessorWith(t, st, sink, []window.Spec{s}, stream.WithSessionPartBytes(1<<10))
	at := func(m int) time.Time { return time.Date(2026, 3, 14, 17, m, 0, 0, time.UTC) }
	handle := func(id, cliente string, event, now int) {
		t.Helper()
		mustHandle(t, p, customerDelivery(id, cliente, at(event)), at(now))
	}
	tick := func(now int) stream.TickResult {
		t.Helper()
		return mustTick(t, p, at(now))
	}
	handle("P-1", "C-1", 0, 1)
	handle("P-2", "C-2", 0, 1)
	for i := range 6 {
		handle(fmt.Sprintf("F-%d", i), fmt.Sprintf("F-%d", i), 0, 1)
	}
	tick(3)
	// Poison C-1's part, keeping what it held.
	var path string
	var good []byte
	docs, err := st.List(ctx, "aggregations/"+s.Name+"/sessions")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if strings.Contains(string(d.Data), `"C-1":`) {
			path, good = d.Path, d.Data
		}
	}
	if path == "" || strings.Contains(string(good), `"C-2":`) {
		t.Fatalf("C-1 in part %q with C-2 (%d parts): choose other customers", path, len(docs))
	}
	put := func(b []byte) { streamtest.WriteDoc(t, st, docstore.Doc{Path: path, Data: b}) }
	put([]byte(`{"layout":3,"keys":"garbage"}`))
	handle("P-3", "C-1", 10, 11)
	handle("P-4", "C-2", 10, 11)
	tr := tick(13)
	if f := tr.Aggregations[0].Failing; len(f) != 1 || f[0].Path != path {
		t.Fatalf("failing %+v, want C-1's part %s", f, path)
	}
	if ps := tr.Aggregations[0].Panes; len(ps) != 1 || ps[0].Key != "C-2" || ps[0].Measures.Pedidos != 2 {
		t.Fatalf("panes %+v, want C-2's EARLY pane of 2 orders", ps)
	}
	tick(14) // still failing: the parked order waits
	put(good)
	tr = tick(15)
	if ps := tr.Aggregations[0].Panes; len(ps) != 1 || ps[0].Key != "C-1" || ps[0].Measures.Pedidos != 2 || !ps[0].WindowEnd.Equal(at(40)) {
		t.Fatalf("panes %+v, want C-1's EARLY pane of its 2 orders, to 17:40", ps)
	}
	tick(5 * 60)
	view := viewOf(t, sink, s)
	want := map[window.WindowKey]window.Measures{}
	for i := range 6 {
		wk := window.WindowKey{Window: window.Window{Start: at(0), End: at(30)}, Key: fmt.Sprint("F-", i)}
		want[wk] = window.Measures{Importe: numeric.FromNanos(1e9), Pedidos: 1, Unidades: 1}
	}
	for _, k := range []string{"C-1", "C-2"} {
		wk := window.WindowKey{Window: window.Window{Start: at(0), End: at(40)}, Key: k}
		want[wk] = window.Measures{Importe: numeric.FromNanos(2e9), Pedidos: 2, Unidades: 2}
	}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if parked, err := st.List(ctx, "aggregations/"+s.Name+"/parked"); err != nil || len(parked) != 0 {
		t.Errorf("parked documents left: %d (%v)", len(parked), err)
	}
}

// TestSessionBytes measures what an open session adds to its part (the
// figure tools/cost prices the session parts with), after its EARLY and
// ON_TIME panes. Run with -v to print it.
func TestSessionBytes(t *testing.T) {
	ctx := context.Background()
	st := newBoltStore(t)
	s := windowtest.SessionSpec()
	p := newProcessor(t, st, streamtest.NewSink(), s)
	const customers, maxBytes = 1000, 240
	ev := time.Date(2026, 3, 14, 17, 0, 0, 123456789, time.UTC)
	var pushes []stream.Push
	for i := range customers {
		event := ev.Add(time.Duration(i) * 1700 * time.Millisecond)
		pushes = append(pushes, stream.Push{Now: event.Add(time.Minute + 987654321), Delivery: delivery(fmt.Sprintf("P-%07d", i), event,
			fmt.Sprintf(`"cliente_id":"CLI-%07d","pais":"ES","importe_total":"1234.56","lineas":[{"sku":"A","cantidad":3,"precio_unitario":"411.52"}]`, i))})
	}
	mustHandleBatch(t, p, pushes)
	for _, now := range []time.Time{ev.Add(32 * time.Minute), ev.Add(90 * time.Minute)} {
		mustTick(t, p, now)
	}
	docs, err := st.List(ctx, "aggregations/"+s.Name+"/sessions")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		n += len(d.Data)
	}
	t.Logf("%d bytes a session (%d sessions in %d parts, ON_TIME emitted)", n/customers, customers, len(docs))
	if n/customers > maxBytes {
		t.Errorf("%d bytes a session, want at most %d (tools/cost's sessionBytes)", n/customers, maxBytes)
	}
}

// TestSessionKeyBound: a key holds at most 1000 open sessions; the order
// that would open one more is dead-lettered in the aggregation, as an
// overflow, and the others count.
func TestSessionKeyBound(t *testing.T) {
	s := windowtest.SessionSpec()
	s.AllowedLateness = 1000 * time.Hour // none expires meanwhile
	sink := streamtest.NewSink()
	p := newProcessor(t, newBoltStore(t), sink, s)
	const orders = 1001
	ev := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	last := ev.Add((orders - 1) * 31 * time.Minute) // a session each: 31 min apart
	var pushes []stream.Push
	for i := range orders {
		pushes = append(pushes, stream.Push{Now: last.Add(time.Minute),
			Delivery: customerDelivery(fmt.Sprintf("P-%04d", i), "C-1", ev.Add(time.Duration(i)*31*time.Minute))})
	}
	mustHandleBatch(t, p, pushes)
	mustTick(t, p, last.Add(2*time.Minute))
	ds, err := sink.Discards()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || !strings.HasPrefix(ds[0].ID, "overflow|"+s.Name+"|") || !strings.Contains(ds[0].Reason, "more than 1000 open sessions") {
		t.Fatalf("discards %+v, want one order of C-1 refused past 1000 open sessions", ds)
	}
	if view := viewOf(t, sink, s); len(view) != 1000 {
		t.Errorf("%d sessions in the view, want 1000", len(view))
	}
}

// viewOf is the dashboard view of the panes of s in sink.
func viewOf(t *testing.T, sink *streamtest.Sink, s window.Spec) map[window.WindowKey]window.Measures {
	t.Helper()
	panes, err := sink.PanesOf(s)
	if err != nil {
		t.Fatal(err)
	}
	view, err := windowtest.View(panes)
	if err != nil {
		t.Fatal(err)
	}
	return view
}
