package stream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// countingStore counts committed transactions' document reads and writes
// (those of the run that committed), and the queries outside them with the
// documents they returned: Firestore bills a query one read per document,
// and at least one.
type countingStore struct {
	docstore.Store
	mu                 sync.Mutex
	txs, reads, writes int
	queries, listed    int
}

// cost is what the counting store saw: Reads and Writes in committed
// transactions, Queries (List, ListTag) and the documents they Listed.
type cost struct{ Transactions, Reads, Writes, Queries, Listed int }

func (s *countingStore) take() cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := cost{s.txs, s.reads, s.writes, s.queries, s.listed}
	s.txs, s.reads, s.writes, s.queries, s.listed = 0, 0, 0, 0, 0
	return c
}

func (s *countingStore) RunTx(ctx context.Context, fn func(context.Context, docstore.Tx) error) error {
	var reads, writes int
	err := s.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		reads, writes = 0, 0
		return fn(ctx, countingTx{Tx: tx, reads: &reads, writes: &writes})
	})
	if err == nil {
		s.mu.Lock()
		s.txs, s.reads, s.writes = s.txs+1, s.reads+reads, s.writes+writes
		s.mu.Unlock()
	}
	return err
}

func (s *countingStore) listedNow(docs []docstore.Doc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries++
	s.listed += len(docs)
}

func (s *countingStore) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	docs, err := s.Store.List(ctx, collection)
	s.listedNow(docs)
	return docs, err
}

func (s *countingStore) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	docs, err := s.Store.ListTag(ctx, collection, tag, limit)
	s.listedNow(docs)
	return docs, err
}

type countingTx struct {
	docstore.Tx
	reads, writes *int
}

func (t countingTx) Get(paths ...string) ([]docstore.Doc, error) {
	*t.reads += len(paths)
	return t.Tx.Get(paths...)
}
func (t countingTx) Set(d docstore.Doc) error { *t.writes++; return t.Tx.Set(d) }
func (t countingTx) Delete(path string) error { *t.writes++; return t.Tx.Delete(path) }

// TestOrderCost pins what an order costs in the store with both shipped
// aggregations (the figures doc.go gives and docs/cost.md counts), handled
// alone: one transaction that reads the control document (the open
// generation and every watermark) and the order's dedup record, and writes
// that record alone, tagged with the generation and carrying the order's
// elements for the tick's fold: 2 reads and 1 write, whatever its windows
// and SKUs, on time or late (its LATE pane comes with a tick). An order
// runs no query. The first order of a process also reads (and on a new store
// creates) the control document once, which is not counted here.
func TestOrderCost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		later time.Duration
		// tick: a tick at 18:15 (W = 18:05: every window of 17:05 ended,
		// none expired) runs between the orders, so the second is late.
		tick     bool
		skus     []string
		wantFate stream.Fate
		want     cost
	}{
		{name: "one SKU", skus: []string{"A"}, wantFate: stream.Accepted, want: cost{Transactions: 1, Reads: 2, Writes: 1}},
		{name: "two SKUs", skus: []string{"A", "B"}, wantFate: stream.Accepted, want: cost{Transactions: 1, Reads: 2, Writes: 1}},
		{name: "ten SKUs", skus: []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, wantFate: stream.Accepted,
			want: cost{Transactions: 1, Reads: 2, Writes: 1}},
		// Late in 1 window of ventas_hora_pais and 4 of the SKU's sliding
		// ones: it reads no window state either.
		{name: "late order", tick: true, later: time.Hour + 6*time.Minute, skus: []string{"A"},
			wantFate: stream.Accepted, want: cost{Transactions: 1, Reads: 2, Writes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &countingStore{Store: newBoltStore(t)}
			p := newProcessor(t, st, streamtest.NewSink(), window.Defaults(), skuSpec())
			// The first order of the process also reads (and on a new
			// store creates) the control document.
			if _, err := p.Handle(ctx, skuOrder("C-0", at(17, 5), tt.skus), at(17, 10)); err != nil {
				t.Fatal(err)
			}
			if tt.tick {
				if _, err := p.Tick(ctx, at(18, 15)); err != nil {
					t.Fatal(err)
				}
			}
			st.take()
			res, err := p.Handle(ctx, skuOrder("C-1", at(17, 5), tt.skus), at(17, 10).Add(tt.later))
			if err != nil || res.Fate() != tt.wantFate {
				t.Fatalf("%+v %v, want %s", res, err, tt.wantFate)
			}
			if l := res.Aggregations[0].Lateness; tt.tick && l != window.Late {
				t.Errorf("the order after the tick is %s, want late", l)
			}
			if diff := cmp.Diff(tt.want, st.take()); diff != "" {
				t.Errorf("cost of an order (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBatchCost: a batch of orders shares the control document's read and
// one transaction: 1 + n reads and n writes for n new orders, whatever
// their keys and windows, and a delivery repeated within the batch costs
// its record's read only once.
func TestBatchCost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		orders int
		repeat bool // the last delivery repeats the first
		want   cost
	}{
		{name: "10 orders", orders: 10, want: cost{Transactions: 1, Reads: 11, Writes: 10}},
		{name: "100 orders", orders: 100, want: cost{Transactions: 1, Reads: 101, Writes: 100}},
		{name: "10 orders and a repeat", orders: 10, repeat: true, want: cost{Transactions: 1, Reads: 11, Writes: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &countingStore{Store: newBoltStore(t)}
			p := newProcessor(t, st, streamtest.NewSink(), window.Defaults(), skuSpec())
			if _, err := p.Handle(ctx, orderDelivery("C-0", "ES", "1.00", at(17, 5)), at(17, 10)); err != nil {
				t.Fatal(err)
			}
			st.take()
			var pushes []stream.Push
			for i := range tt.orders {
				pais := []string{"ES", "FR", "PT"}[i%3]
				pushes = append(pushes, stream.Push{Now: at(17, 10),
					Delivery: orderDelivery(fmt.Sprintf("C-%d", i+1), pais, "1.00", at(17, i%10))})
			}
			if tt.repeat {
				pushes = append(pushes, pushes[0])
			}
			res, err := p.HandleBatch(ctx, pushes)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				want := stream.Accepted
				if tt.repeat && i == len(res)-1 {
					want = stream.Duplicate
				}
				if r.Fate() != want {
					t.Fatalf("order %d: %s, want %s", i, r.Fate(), want)
				}
			}
			if diff := cmp.Diff(tt.want, st.take()); diff != "" {
				t.Errorf("cost of a batch (-want +got):\n%s", diff)
			}
		})
	}
}
