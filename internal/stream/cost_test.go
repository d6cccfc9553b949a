package stream_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/order"
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

// TestOrderCost pins what orders cost with both shipped aggregations (the
// figures doc.go gives and docs/cost.md counts). An order handled alone is
// one transaction reading the control document and the order's dedup record
// and writing that record: 2 reads and 1 write, whatever its windows and
// SKUs, on time or late, and no query. A batch of orders shares the control
// document's read and one transaction: 1 + n reads and n writes for n new
// orders, whatever their keys and windows, and a delivery repeated within
// the batch costs its record's read only once. The first order of a process
// also reads (and on a new store creates) the control document once, not
// counted here.
func TestOrderCost(t *testing.T) {
	one := cost{Transactions: 1, Reads: 2, Writes: 1}
	sku := func(skus ...string) []order.Delivery {
		return []order.Delivery{skuOrder("C-1", at(17, 5), skus)}
	}
	batch := func(n int) []order.Delivery {
		var ds []order.Delivery
		for i := range n {
			pais := []string{"ES", "FR", "PT"}[i%3]
			ds = append(ds, orderDelivery(fmt.Sprintf("C-%d", i+1), pais, "1.00", at(17, i%10)))
		}
		return ds
	}
	tests := []struct {
		name   string
		orders []order.Delivery
		late   bool // a tick at 18:15 (W = 18:05) runs first: late in 1 + 4 windows
		want   cost
	}{
		{"one SKU", sku("A"), false, one},
		{"two SKUs", sku("A", "B"), false, one},
		{"ten SKUs", sku("A", "B", "C", "D", "E", "F", "G", "H", "I", "J"), false, one},
		{"late order", sku("A"), true, one},
		{"a batch of 10 orders", batch(10), false, cost{Transactions: 1, Reads: 11, Writes: 10}},
		{"a batch of 100 orders", batch(100), false, cost{Transactions: 1, Reads: 101, Writes: 100}},
		{"a batch of 10 orders and a repeat", append(batch(10), batch(1)...), false,
			cost{Transactions: 1, Reads: 11, Writes: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := streamtest.NewRecorder(newBoltStore(t))
			p := newProcessor(t, st, streamtest.NewSink(), window.Defaults(), skuSpec())
			mustHandle(t, p, skuOrder("C-0", at(17, 5), []string{"A"}), at(17, 10))
			now := at(17, 10)
			if tt.late {
				mustTick(t, p, at(18, 15))
				now = at(18, 16)
			}
			st.TakeCost()
			var pushes []stream.Push
			for _, d := range tt.orders {
				pushes = append(pushes, stream.Push{Delivery: d, Now: now})
			}
			res := mustHandleBatch(t, p, pushes)
			seen := map[string]bool{}
			for i, r := range res {
				want := stream.Accepted
				if seen[r.PedidoID] {
					want = stream.Duplicate
				}
				seen[r.PedidoID] = true
				if r.Fate() != want {
					t.Fatalf("order %d: %s, want %s", i, r.Fate(), want)
				}
			}
			if l := res[0].Aggregations[0].Lateness; tt.late && l != window.Late {
				t.Errorf("the order after the tick is %s, want late", l)
			}
			if diff := cmp.Diff(tt.want, st.TakeCost()); diff != "" {
				t.Errorf("cost (-want +got):\n%s", diff)
			}
		})
	}
}
