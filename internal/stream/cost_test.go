package stream_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

type cost = streamtest.Cost

// failAfter makes the Recorder's writes of path fail after the first n.
func failAfter(st *streamtest.Recorder, path string, n int) {
	st.FailSets(func(p string) bool {
		if p == path {
			n--
		}
		return p == path && n < 0
	})
}

// TestOrderCost pins what an order costs with both shipped aggregations
// (the figures doc.go gives and docs/cost.md counts), handled alone: one
// transaction reading the control document and the order's dedup record and
// writing that record: 2 reads and 1 write, whatever its windows and SKUs,
// on time or late, and no query. The first order of a process also reads
// (and on a new store creates) the control document once, not counted here.
func TestOrderCost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		skus []string
		late bool // a tick at 18:15 (W = 18:05) runs between the orders: late in 1 + 4 windows
	}{
		{"one SKU", []string{"A"}, false},
		{"two SKUs", []string{"A", "B"}, false},
		{"ten SKUs", []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, false},
		{"late order", []string{"A"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := streamtest.NewRecorder(newBoltStore(t))
			p := newProcessor(t, st, streamtest.NewSink(), window.Defaults(), skuSpec())
			if _, err := p.Handle(ctx, skuOrder("C-0", at(17, 5), tt.skus), at(17, 10)); err != nil {
				t.Fatal(err)
			}
			now := at(17, 10)
			if tt.late {
				if _, err := p.Tick(ctx, at(18, 15)); err != nil {
					t.Fatal(err)
				}
				now = at(18, 16)
			}
			st.TakeCost()
			res, err := p.Handle(ctx, skuOrder("C-1", at(17, 5), tt.skus), now)
			if err != nil || res.Fate() != stream.Accepted {
				t.Fatalf("%+v %v, want accepted", res, err)
			}
			if l := res.Aggregations[0].Lateness; tt.late && l != window.Late {
				t.Errorf("the order after the tick is %s, want late", l)
			}
			if diff := cmp.Diff(cost{Transactions: 1, Reads: 2, Writes: 1}, st.TakeCost()); diff != "" {
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
		{"10 orders", 10, false, cost{Transactions: 1, Reads: 11, Writes: 10}},
		{"100 orders", 100, false, cost{Transactions: 1, Reads: 101, Writes: 100}},
		{"10 orders and a repeat", 10, true, cost{Transactions: 1, Reads: 11, Writes: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := streamtest.NewRecorder(newBoltStore(t))
			p := newProcessor(t, st, streamtest.NewSink(), window.Defaults(), skuSpec())
			if _, err := p.Handle(ctx, orderDelivery("C-0", "ES", "1.00", at(17, 5)), at(17, 10)); err != nil {
				t.Fatal(err)
			}
			st.TakeCost()
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
			if diff := cmp.Diff(tt.want, st.TakeCost()); diff != "" {
				t.Errorf("cost of a batch (-want +got):\n%s", diff)
			}
		})
	}
}
