package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
// windows. A tick's fold reads and writes the documents of the keys its new
// orders touch and of the keys due, never the others: with n customers
// holding open sessions (ON_TIME emitted, kept by a long allowed lateness)
// the tick costs the same whatever n; and a hot customer with a thousand
// orders since the last tick costs the fold what a customer with one order
// costs: its one key document read and written once. Only the listing of
// the closed generation grows with the orders (one read per record, the
// orders themselves).
//
// The figures, one session aggregation: 8 transactions — lease taken
// (1 read, 1 write), fold state (fold + control), control, closing the
// open generation (1 read, 1 write), the watermark advance (1 read,
// 1 write), the fold (fold + control + the customer's key document; writes
// the key document, the EARLY pane's outbox document and the fold document
// with the key's agenda entry), the outbox row's deletion (1 write), lease
// given back (1 read, 1 write): 10 reads, 8 writes. 5 queries, listing the
// records of the new orders twice (the open generation before and after
// closing it; a query of limit 1 the first time).
func TestSessionTickCost(t *testing.T) {
	tests := []struct {
		name         string
		open, orders int
		want         cost
	}{
		{name: "3 open customers, 1 order", open: 3, orders: 1, want: cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 2}},
		{name: "150 open customers, 1 order", open: 150, orders: 1, want: cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 2}},
		{name: "3 open customers, a hot customer's 1000 orders", open: 3, orders: 1000,
			want: cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 1001}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, tr := tickCost(t, windowtest.SessionSpec(), tt.open, tt.orders, func(i int, event time.Time) order.Delivery {
				return customerDelivery(fmt.Sprintf("Q-%d", i), fmt.Sprintf("C-%d", i), event)
			}, func(i int, event time.Time) order.Delivery {
				return customerDelivery(fmt.Sprintf("HOT-%d", i), "C-HOT", event)
			})
			at := tr.Aggregations[0]
			if at.OpenWindows != tt.open {
				t.Errorf("%d keys on the agenda before the fold, want %d", at.OpenWindows, tt.open)
			}
			if len(at.Panes) != 1 || at.Panes[0].Measures.Pedidos != int64(tt.orders) || at.Panes[0].Timing != window.TimingEarly {
				t.Fatalf("panes %+v, want the hot customer's EARLY pane of %d orders", at.Panes, tt.orders)
			}
			if diff := cmp.Diff(tt.want, c); diff != "" {
				t.Errorf("cost of a tick (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionFoldInterrupted: a tick whose new orders touch more keys than
// one fold transaction rewrites folds them in several; when it stops
// between two of them, the next tick (at a newer W, over more generations)
// adds nothing twice: each key's document says which generation is in.
func TestSessionFoldInterrupted(t *testing.T) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	fs := &nthSetFailingStore{Store: newBoltStore(t), path: "aggregations/" + s.Name + "/control/fold", after: 1}
	sink := streamtest.NewSink()
	p := newProcessor(t, fs, sink, s)
	const customers = 450 // three fold transactions
	ev := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	var pushes []stream.Push
	for i := range customers {
		pushes = append(pushes, stream.Push{Now: ev.Add(time.Minute),
			Delivery: customerDelivery(fmt.Sprintf("P-%d", i), fmt.Sprintf("C-%d", i), ev)})
	}
	if _, err := p.HandleBatch(ctx, pushes); err != nil {
		t.Fatal(err)
	}
	fs.arm()
	if _, err := p.Tick(ctx, ev.Add(3*time.Minute)); err == nil {
		t.Fatal("the tick whose second fold transaction failed reported no error")
	}
	fs.disarm()
	// Idle by now: W moves, and the fold covers one generation more.
	for _, now := range []time.Time{ev.Add(20 * time.Minute), ev.Add(4 * time.Hour)} {
		if _, err := p.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	panes, err := sink.PanesOf(s)
	if err != nil {
		t.Fatal(err)
	}
	view, err := windowtest.View(panes)
	if err != nil {
		t.Fatal(err)
	}
	if len(view) != customers {
		t.Fatalf("%d sessions in the view, want %d", len(view), customers)
	}
	for wk, m := range view {
		if m.Pedidos != 1 {
			t.Errorf("session of %s: %d pedidos, want 1", wk.Key, m.Pedidos)
		}
	}
}

var errFoldDown = errors.New("injected: the fold transaction fails")

// nthSetFailingStore fails, while armed, every write of path after the
// first after such writes: with after 0, the fold transaction of a tick
// whose watermark advance committed.
type nthSetFailingStore struct {
	docstore.Store
	path  string
	after int
	mu    sync.Mutex
	armed bool
	seen  int
}

func (s *nthSetFailingStore) arm()    { s.mu.Lock(); s.armed, s.seen = true, 0; s.mu.Unlock() }
func (s *nthSetFailingStore) disarm() { s.mu.Lock(); s.armed = false; s.mu.Unlock() }

func (s *nthSetFailingStore) RunTx(ctx context.Context, fn func(context.Context, docstore.Tx) error) error {
	return s.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		return fn(ctx, nthFailingTx{Tx: tx, s: s})
	})
}

type nthFailingTx struct {
	docstore.Tx
	s *nthSetFailingStore
}

func (t nthFailingTx) Set(d docstore.Doc) error {
	t.s.mu.Lock()
	fail := false
	if t.s.armed && d.Path == t.s.path {
		t.s.seen++
		fail = t.s.seen > t.s.after
	}
	t.s.mu.Unlock()
	if fail {
		return errFoldDown
	}
	return t.Tx.Set(d)
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
		if _, err := p.Handle(ctx, d, at(21+i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Tick(ctx, at(25)); err != nil {
		t.Fatal(err)
	}
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

// TestSessionKeyPoisoned: a key document that cannot be read fails that
// key only. The tick succeeds and reports it; the other keys get their
// panes; the key's orders meanwhile are parked, not lost; once its document
// reads again, the next tick adds them to its sessions, once.
func TestSessionKeyPoisoned(t *testing.T) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	st := newBoltStore(t)
	sink := streamtest.NewSink()
	p := newProcessor(t, st, sink, s)
	at := func(m int) time.Time { return time.Date(2026, 3, 14, 17, m, 0, 0, time.UTC) }
	handle := func(id, cliente string, event, now int) {
		t.Helper()
		if _, err := p.Handle(ctx, customerDelivery(id, cliente, at(event)), at(now)); err != nil {
			t.Fatal(err)
		}
	}
	tick := func(now int) stream.TickResult {
		t.Helper()
		tr, err := p.Tick(ctx, at(now))
		if err != nil {
			t.Fatalf("tick at %d: %v", now, err)
		}
		return tr
	}
	handle("P-1", "C-1", 0, 1)
	handle("P-2", "C-2", 0, 1)
	tick(3)
	// Poison C-1's document, keeping what it held.
	var path string
	var good []byte
	docs, err := st.List(ctx, "aggregations/"+s.Name+"/sessions")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if strings.Contains(string(d.Data), `"key":"C-1"`) {
			path, good = d.Path, d.Data
		}
	}
	put := func(b []byte) { streamtest.WriteDoc(t, st, docstore.Doc{Path: path, Data: b}) }
	put([]byte(`{"layout":3,"sessions":"garbage"}`))
	handle("P-3", "C-1", 10, 11)
	handle("P-4", "C-2", 10, 11)
	tr := tick(13)
	if f := tr.Aggregations[0].Failing; len(f) != 1 || f[0].Key != "C-1" || f[0].Path != path {
		t.Fatalf("failing %+v, want C-1's document %s", f, path)
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
	panes, err := sink.PanesOf(s)
	if err != nil {
		t.Fatal(err)
	}
	view, err := windowtest.View(panes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[window.WindowKey]window.Measures{}
	for _, k := range []string{"C-1", "C-2"} {
		want[window.WindowKey{Window: window.Window{Start: at(0), End: at(40)}, Key: k}] = window.Measures{Importe: decimal(t, "2.00"), Pedidos: 2, Unidades: 2}
	}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	if parked, err := st.List(ctx, "aggregations/"+s.Name+"/parked"); err != nil || len(parked) != 0 {
		t.Errorf("parked documents left: %d (%v)", len(parked), err)
	}
}

func decimal(t *testing.T, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
