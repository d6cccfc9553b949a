package streamtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// again checks invariant 6: handing a step's deliveries again, or running
// its tick again, commits nothing but the tick leases and appends nothing;
// every redelivery is a duplicate.
func (r *rig) again(ctx context.Context, tick bool, now time.Time, pushes []stream.Push) (stream.TickResult, error) {
	mark, counts := r.store.Writes(), r.sinkCounts()
	var res stream.TickResult
	if tick {
		var err error
		if res, err = r.p.Tick(ctx, now); err != nil {
			return res, fmt.Errorf("tick again: %w", err)
		}
	} else {
		results, err := r.p.HandleBatch(ctx, pushes)
		if err != nil {
			return res, fmt.Errorf("handle again: %w", err)
		}
		for _, x := range results {
			if !x.Duplicate && (len(x.Aggregations) == 0 || slices.ContainsFunc(x.Aggregations, notDuplicate)) {
				return res, fmt.Errorf("redelivery handled as %+v, want a duplicate", x)
			}
		}
	}
	if writes, again := r.store.writesBesidesLeases(mark), r.sinkCounts(); len(writes) > 0 || !slices.Equal(counts, again) {
		return res, fmt.Errorf("repeating it wrote %v; rows per table %v then %v", writes, counts, again)
	}
	return res, nil
}

func notDuplicate(o stream.Outcome) bool { return o.Fate != stream.Duplicate }

// sinkCounts are the distinct rows of every table the rig writes.
func (r *rig) sinkCounts() []int {
	out := []int{discardCount(r.sink)}
	for _, s := range r.specs {
		t, err := stream.PanesTableOf(s)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, r.sink.Count(t.Name))
	}
	return out
}

// testMultiScenario is a deterministic story of the shipped aggregations: an
// order with two SKUs counts in both SKU cells and once in its country; its
// redelivery is a duplicate in every aggregation; a line without a SKU is
// recorded; an order too late for its oldest sliding windows counts in the
// newer ones.
func testMultiScenario(t *testing.T, en env) {
	specs := windowtest.ShippedSpecs()
	r := newRig(t, en, specs...)
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	mk := func(id string, et time.Time, lines ...order.Line) windowtest.MultiEvent {
		o := order.Order{PedidoID: id, ClienteID: "C-1", Pais: "ES", EventTime: et, Lineas: lines}
		for _, l := range lines {
			a, _ := l.PrecioUnitario.MulInt(l.Cantidad)
			o.ImporteTotal, _ = o.ImporteTotal.Add(a)
		}
		return windowtest.MultiEvent{Kind: windowtest.Deliver, Now: at(17, 20), MessageID: "m-" + id, Order: o}
	}
	line := func(sku string, n int64, p string) order.Line {
		price, err := numeric.Parse(p, false)
		if err != nil {
			t.Fatal(err)
		}
		return order.Line{SKU: sku, Cantidad: n, PrecioUnitario: price}
	}
	model := windowtest.NewMulti(specs...)
	two := mk("P-1", at(17, 10), line("moch-40l-az", 2, "89.90"), line("GORRO-LANA", 1, "12.50"), line("", 1, "3"))
	events := []windowtest.MultiEvent{two, two,
		{Kind: windowtest.Tick, Now: at(17, 22)},
		{Kind: windowtest.Tick, Now: at(20, 15)}, // idle: W = 20:05
	}
	late := mk("P-2", at(17, 50), line("MOCH-40L-AZ", 1, "10"))
	late.Now = at(20, 16) // the window of 17:00 (end + L = 20:00) is too late; 17:15 on count
	events = append(events, late, windowtest.MultiEvent{Kind: windowtest.Tick, Now: at(23, 59)})
	for i, e := range events {
		res, _, err := r.step(t, model, i, e)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if i == 1 && slices.ContainsFunc(res.Aggregations, notDuplicate) {
			t.Errorf("redelivery: %+v, want a duplicate in every aggregation", res.Aggregations)
		}
	}
	for _, s := range specs {
		all, err := r.sink.PanesOf(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := model.CheckPanes(s.Name, all); err != nil {
			t.Error(err)
		}
		view, err := windowtest.View(all)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(model.Final(s.Name), view); diff != "" {
			t.Errorf("%s: view (-model +processor):\n%s", s.Name, diff)
		}
	}
	const sku = "ventas_sku_hora_movil"
	skuFinal := model.Final(sku)
	var keys []string
	for wk := range skuFinal {
		if wk.Window.Start.Equal(at(17, 0)) {
			keys = append(keys, wk.Key+"="+skuFinal[wk].Importe.String())
		}
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"GORRO-LANA=12.5", "MOCH-40L-AZ=179.8"}, keys); diff != "" {
		t.Errorf("SKU cells of 17:00 (-want +got):\n%s", diff)
	}
	drops, err := r.sink.Drops(sku)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.CheckDrops(sku, drops); err != nil || len(drops) != 1 {
		t.Errorf("drops %+v: %v; want P-2 dropped from the window of 17:00 only", drops, err)
	}
	missing, err := r.sink.SKUMissing()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ventas_sku_hora_movil|P-1|2"}, missing); diff != "" {
		t.Errorf("lines without a SKU (-want +got):\n%s", diff)
	}
}
