package stream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// TestOversizedOrderIsDeadLettered: an order counts in one dedup record;
// one whose elements could not fit a document (here as many distinct SKUs
// of the longest SKU an order may have, counted in two aggregations by
// SKU) is dead-lettered with the reason instead of failing on every
// redelivery, and the orders batched with it count. The same SKUs, short,
// in twelve sliding windows, fit: a record names each window and each key
// once, not every (window, key).
func TestOversizedOrderIsDeadLettered(t *testing.T) {
	ctx := context.Background()
	sink := streamtest.NewSink()
	spec := skuSpec()
	spec.Period = 5 * time.Minute
	other := spec
	other.Name = "ventas_sku_otra"
	p, err := stream.New(newBoltStore(t), sink, []window.Spec{spec, other}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := p.Tick(ctx, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
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

// TestLateOrderOnUnreadableWindowIsParked: a late order for a window whose
// state cannot be read is accepted, not failed: the fold parks it and
// reports the window, so it does not bounce until the window expires and
// then turn too late.
func TestLateOrderOnUnreadableWindowIsParked(t *testing.T) {
	ctx := context.Background()
	hora := window.Defaults()
	store := newBoltStore(t)
	sink := streamtest.NewSink()
	p, err := stream.New(store, sink, []window.Spec{hora}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	if _, err := p.Handle(ctx, orderDelivery("A", "ES", "10.00", at(17, 5)), at(17, 10)); err != nil {
		t.Fatal(err)
	}
	// W passes the 17:00 window's end: its ON_TIME pane.
	for _, m := range []time.Time{at(17, 12), at(18, 15)} {
		if _, err := p.Tick(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	poison := "aggregations/" + hora.Name + "/state/20260314T170000Z_0"
	if err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: poison, Data: []byte(`{"layout":4}`)})
	}); err != nil {
		t.Fatal(err)
	}
	res, err := p.Handle(ctx, orderDelivery("B", "ES", "2.00", at(17, 30)), at(18, 16))
	if err != nil {
		t.Fatalf("late order for an unreadable window: %v; want it accepted (2xx)", err)
	}
	if o := res.Aggregations[0]; o.Fate != stream.Accepted || o.Lateness != window.Late {
		t.Fatalf("late order for an unreadable window: %+v, want accepted late, its correction left to the fold", o)
	}
	tr, err := p.Tick(ctx, at(18, 17))
	if err != nil {
		t.Fatal(err)
	}
	if at := tr.Aggregations[0]; at.FailingCells != 1 || at.Failing[0].Path != poison {
		t.Fatalf("tick: %+v; want the window reported failing", at)
	}
	parked, err := store.List(ctx, "aggregations/"+hora.Name+"/parked")
	if err != nil {
		t.Fatal(err)
	}
	if len(parked) != 1 {
		t.Errorf("%d parked documents, want B's element parked", len(parked))
	}
}

// TestSessionsKeyedBySKUAreRefused: a session follows one customer (or
// country) through its orders; the lines of an order are not a key a
// session can follow, and New says so by name.
func TestSessionsKeyedBySKUAreRefused(t *testing.T) {
	spec := windowtest.SessionSpec()
	spec.KeyField = stream.KeySKU
	_, err := stream.New(newBoltStore(t), streamtest.NewSink(), []window.Spec{window.Defaults(), spec}, streamtest.IsCountry, logging.Discard())
	if err == nil || !strings.Contains(err.Error(), `aggregation "sesiones_cliente": session windows are keyed by an order field, not "sku"`) {
		t.Fatalf("New = %v, want the session aggregation keyed by sku refused by name", err)
	}
}
