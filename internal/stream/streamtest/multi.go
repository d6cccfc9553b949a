package streamtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// MultiDelivery renders an event of several aggregations as the push
// delivery the web shop's message would arrive in: the whole order, its
// lines as written (SKUs with their stray case and spaces), momento_evento
// as an attribute. An invalid event is broken as Delivery breaks it.
func MultiDelivery(e windowtest.MultiEvent) order.Delivery {
	o := e.Order
	lines := make([]any, 0, len(o.Lineas))
	for _, l := range o.Lineas {
		lines = append(lines, map[string]any{"sku": l.SKU, "cantidad": l.Cantidad, "precio_unitario": l.PrecioUnitario.String()})
	}
	body := map[string]any{
		"pedido_id":     o.PedidoID,
		"cliente_id":    o.ClienteID,
		"pais":          o.Pais,
		"importe_total": o.ImporteTotal.String(),
		"lineas":        lines,
	}
	attrs := map[string]string{order.EventTimeAttribute: o.EventTime.Format(time.RFC3339Nano)}
	return encode(body, attrs, e.Invalid, o.PedidoID, e.MessageID, e.Now)
}

// testMultiProperty plays random streams of whole orders through a
// processor of several aggregations (the shipped three, and random sets of
// fixed and sliding windows keyed by pais, cliente_id and sku) and through
// windowtest.Multi, in both accumulation modes, with two late delays, and
// random batch boundaries when the rig batches.
func testMultiProperty(t *testing.T, en env, f Features) {
	streams := max(1, f.Streams/2)
	cov := coverage{}
	for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
		for _, lateDelay := range []time.Duration{time.Minute, 3 * time.Minute} {
			for seed := range uint64(streams) {
				t.Run(fmt.Sprintf("%s/Ld=%s/seed=%d", mode, lateDelay, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^0x3a17))
					specs := windowtest.RandomSpecs(r)
					if seed%3 == 0 {
						specs = windowtest.ShippedSpecs()
					}
					for i := range specs {
						specs[i].Accumulation, specs[i].LateDelay = mode, lateDelay
					}
					cfg := windowtest.StreamConfig{Events: f.Events, Open: seed%5 == 4}
					events := windowtest.MultiStream(r, specs, cfg)
					runAgainstMulti(t, newRig(t, en, specs...), specs, events, cfg, cov)
				})
			}
		}
	}
	if !t.Failed() {
		cov.check(t, "sliding aggregation", "sku aggregation", "order too late for some windows, on time for others",
			"line without a SKU", "LATE pane", "too-late drop", "duplicate")
	}
}

// testKindsProperty plays random streams through one aggregation of each
// kind of window at once (fixed, sliding and session: windowtest.RandomKinds)
// against windowtest.Multi, in both accumulation modes and three late
// delays; the session aggregation's MERGED panes, merges and bridges are
// compared pane by pane like the rest.
func testKindsProperty(t *testing.T, en env, f Features) {
	streams := max(1, f.Streams/2)
	cov := coverage{}
	for _, mode := range []window.Accumulation{window.Accumulating, window.Discarding} {
		for _, lateDelay := range []time.Duration{time.Minute, 90 * time.Second, 3 * time.Minute} {
			for seed := range uint64(streams) {
				t.Run(fmt.Sprintf("%s/Ld=%s/seed=%d", mode, lateDelay, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, uint64(lateDelay)^0x5e55))
					specs := windowtest.RandomKinds(r)
					for i := range specs {
						specs[i].Accumulation, specs[i].LateDelay = mode, lateDelay
					}
					cfg := windowtest.StreamConfig{Events: f.Events, Open: seed%5 == 4}
					runAgainstMulti(t, newRig(t, en, specs...), specs, windowtest.MultiStream(r, specs, cfg), cfg, cov)
				})
			}
		}
	}
	if !t.Failed() {
		cov.check(t, "MERGED pane")
	}
}

// runAgainstMulti is runAgainstModel for several aggregations, with lines
// without a SKU and (order, window) fates.
func runAgainstMulti(t *testing.T, r *rig, specs []window.Spec, events []windowtest.MultiEvent, cfg windowtest.StreamConfig, cov coverage) {
	t.Helper()
	ctx := t.Context()
	model := windowtest.NewMulti(specs...)
	for _, s := range specs {
		if s.Sliding() {
			cov["sliding aggregation"]++
		}
		if s.KeyField == windowtest.KeySKU {
			cov["sku aggregation"]++
		}
	}
	fates := make([]map[windowtest.OrderWindow]windowtest.Fate, len(specs))
	for i := range fates {
		fates[i] = map[windowtest.OrderWindow]windowtest.Fate{}
	}
	seen := map[string]bool{}
	fail := func(i int, e windowtest.MultiEvent, format string, a ...any) {
		t.Helper()
		t.Fatalf("event %d %s at %s (message %s order %s %q): %s\nspecs %+v",
			i, e.Kind, e.Now.Format(time.RFC3339Nano), e.MessageID, e.Order.PedidoID, e.Invalid, fmt.Sprintf(format, a...), specs)
	}
	steps := r.steps(len(events), func(i int) bool { return events[i].Kind == windowtest.Deliver }, 0x5eed)
	for i, n := range steps {
		e, step := events[i], events[i:i+n]
		var want []window.Pane
		pushes := make([]stream.Push, n)
		for j, e := range step {
			want = append(want, model.Apply(e)...)
			pushes[j] = stream.Push{Delivery: MultiDelivery(e), Now: e.Now}
		}
		before := make([]int, len(specs))
		for ai, s := range specs {
			before[ai] = len(r.panesOf(s.Name))
		}
		switch e.Kind {
		case windowtest.Deliver:
			results, err := r.p.HandleBatch(ctx, pushes)
			if err != nil {
				fail(i, e, "Handle of %d deliveries: %v", n, err)
			}
			for j, e := range step {
				res := results[j]
				if e.Invalid != "" {
					if !strings.HasPrefix(res.Invalid, "invalid: ") {
						fail(i+j, e, "result %+v, want an invalid message", res)
					}
					continue
				}
				if len(res.Aggregations) != len(specs) {
					fail(i+j, e, "result %+v, want one outcome per aggregation", res)
				}
				first := !seen[e.Order.PedidoID]
				seen[e.Order.PedidoID] = true
				for ai, out := range res.Aggregations {
					if !first {
						if out.Fate != stream.Duplicate {
							fail(i+j, e, "%s: outcome %+v, want a duplicate", specs[ai].Name, out)
						}
						cov["duplicate"]++
						continue
					}
					dropped, accepted := false, false
					for _, el := range out.Elements {
						ow := windowtest.OrderWindow{PedidoID: e.Order.PedidoID, WindowStart: el.Window.Start}
						switch el.Fate {
						case stream.Accepted:
							fates[ai][ow], accepted = windowtest.Accepted, true
						case stream.TooLate:
							fates[ai][ow], dropped = windowtest.Dropped, true
						default:
							fail(i+j, e, "%s: element %+v", specs[ai].Name, el)
						}
					}
					if dropped && accepted {
						cov["order too late for some windows, on time for others"]++
					}
					cov["line without a SKU"] += len(out.SKUMissing)
				}
			}
		case windowtest.Tick:
			res, err := r.p.Tick(ctx, e.Now)
			if err != nil {
				fail(i, e, "Tick: %v", err)
			}
			for ai, at := range res.Aggregations {
				if w := model.Watermark(specs[ai].Name); !w.Equal(at.Watermark) {
					fail(i, e, "%s: watermark %s, model %s", specs[ai].Name, at.Watermark, w)
				}
			}
		}
		var got []window.Pane
		for ai, s := range specs {
			got = append(got, r.panesOf(s.Name)[before[ai]:]...)
		}
		windowtest.SortPanes(want)
		windowtest.SortPanes(got)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			fail(i, e, "panes differ after %d events (-model +processor):\n%s", n, diff)
		}
		for _, p := range got {
			cov[string(p.Timing)+" pane"]++
		}

		if _, err := r.again(ctx, e.Kind == windowtest.Tick, e.Now, pushes); err != nil {
			fail(i, e, "%v", err)
		}
	}

	for ai, s := range specs {
		all := r.panesOf(s.Name)
		if err := model.CheckPanes(s.Name, all); err != nil {
			t.Errorf("invariants: %v", err)
		}
		drops := r.drops(s.Name)
		cov["too-late drop"] += len(drops)
		if err := model.CheckDrops(s.Name, drops); err != nil {
			t.Error(err)
		}
		if len(drops) != len(model.Drops(s.Name)) {
			t.Errorf("%s: %d drop rows, the model %d", s.Name, len(drops), len(model.Drops(s.Name)))
		}
		if err := model.CheckFates(s.Name, fates[ai]); err != nil {
			t.Error(err)
		}
		if !cfg.Open {
			if n := r.open(s.Name); n != 0 {
				t.Errorf("%s: the closing tick left %d windows open", s.Name, n)
			}
			view, err := windowtest.View(all)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(model.Final(s.Name), view); diff != "" {
				t.Errorf("%s: dashboard view differs from the sums of the accepted elements (-want +got):\n%s", s.Name, diff)
			}
		}
	}
	missing, err := r.sink.SKUMissing()
	if err != nil {
		t.Fatal(err)
	}
	var wantMissing []string
	for _, m := range model.SKUMissing() {
		wantMissing = append(wantMissing, fmt.Sprintf("%s|%s|%d", m.Aggregation, m.PedidoID, m.Line))
	}
	slices.Sort(wantMissing)
	if diff := cmp.Diff(wantMissing, missing, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("lines without a SKU (-model +processor):\n%s", diff)
	}
	r.sameInvalid(model.InvalidMessages())
	r.clean()
	if !cfg.Open && !model.Settled() {
		t.Error("the closing tick left changes un-emitted in the model")
	}
}

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
	ctx := t.Context()
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
		model.Apply(e)
		if e.Kind == windowtest.Tick {
			if _, err := r.p.Tick(ctx, e.Now); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			continue
		}
		res, err := r.p.Handle(ctx, MultiDelivery(e), e.Now)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if i == 1 && slices.ContainsFunc(res.Aggregations, func(o stream.Outcome) bool { return o.Fate != stream.Duplicate }) {
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
