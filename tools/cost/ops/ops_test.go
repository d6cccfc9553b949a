package ops_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/tools/cost/ops"
)

// TestAsAsserted: the figures internal/stream's tests assert on the real
// processor, in their shape (writes count deletes), come out of Order and
// Ticks: TestOrderCost's order and TestTickReadsBounded's tick of one
// aggregation listing one record, folding one window and writing one
// outbox document.
func TestAsAsserted(t *testing.T) {
	type cost struct{ Transactions, Reads, Writes, Queries, Listed int64 }
	shape := func(o ops.Ops) cost { return cost{o.Transactions, o.Reads, o.Writes + o.Deletes, o.Queries, o.Listed} }
	tests := []struct {
		name string
		got  ops.Ops
		want cost
	}{
		{name: "TestOrderCost, one SKU", got: ops.Order, want: cost{Transactions: 1, Reads: 2, Writes: 1}},
		{name: "TestTickReadsBounded", got: ops.Ticks(1, 1, 1, 1, 1, 1), want: cost{Transactions: 8, Reads: 10, Writes: 8, Queries: 5, Listed: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shape(tt.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTicksAddUp: n ticks cost n times one tick's fixed part plus what
// they list, fold and append, however it is spread over them.
func TestTicksAddUp(t *testing.T) {
	one := ops.Ticks(1, 2, 10, 3, 2, 1)
	sixty := ops.Ticks(60, 2, 600, 180, 120, 60)
	if diff := cmp.Diff(one.Times(60), sixty); diff != "" {
		t.Errorf("60 ticks (-want +got):\n%s", diff)
	}
	if got, want := one.BilledReads(), one.Reads+one.Listed+one.EmptyQueries; got != want {
		t.Errorf("billed reads %d, want %d", got, want)
	}
}
