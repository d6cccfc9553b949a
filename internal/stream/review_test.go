package stream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
)

// TestOversizedOrderIsDeadLettered: an order whose elements could not fit
// one dedup record (the most SKUs of the longest length, in two SKU
// aggregations) is dead-lettered instead of failing on every redelivery,
// and the orders batched with it count. The same SKUs, short, in twelve
// sliding windows fit: a record names each window and each key once.
func TestOversizedOrderIsDeadLettered(t *testing.T) {
	ctx := context.Background()
	sink := streamtest.NewSink()
	spec := skuSpec()
	spec.Period = 5 * time.Minute
	other := spec
	other.Name = "ventas_sku_otra"
	p := newProcessor(t, newBoltStore(t), sink, spec, other)
	long := skus(0, order.MaxLineas)
	for i := range long {
		long[i] += strings.Repeat("X", order.MaxSKUBytes-len(long[i]))
	}
	at := time.Date(2026, 3, 14, 17, 5, 0, 0, time.UTC)
	now := at.Add(time.Minute)
	res, err := p.HandleBatch(ctx, []stream.Push{
		{Delivery: skuOrder("BIG", at, long), Now: now},
		{Delivery: skuOrder("SMALL", at, skus(0, 2)), Now: now},
		{Delivery: skuOrder("WIDE", at, skus(10, 10+order.MaxLineas)), Now: now},
	})
	if err != nil {
		t.Fatalf("HandleBatch: %v; want the batch handled (2xx)", err)
	}
	if f := res[0].Fate(); f != stream.Invalid || !strings.Contains(res[0].Invalid, "too many windows and keys for one dedup record") {
		t.Errorf("oversized order: fate %s, reason %q; want invalid, naming the record's limit", f, res[0].Invalid)
	}
	for _, r := range res[1:] {
		if f := r.Fate(); f != stream.Accepted {
			t.Errorf("order %s batched with it: fate %s, want accepted", r.PedidoID, f)
		}
	}
	mustTick(t, p, now.Add(2*time.Minute))
	ps, err := sink.PanesOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	// SMALL's and WIDE's SKUs (S0000, S0001, and S0010 on) in their
	// twelve windows each.
	if want := (2 + order.MaxLineas) * 12; len(ps) != want {
		t.Errorf("%d panes, want %d (the SKUs of SMALL and WIDE x 12 windows)", len(ps), want)
	}
}
