package stream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestTickIsolatesAggregations: one aggregation's tick failing (its
// documents unreadable, then its panes table refusing rows) does not stop
// the other's panes; the tick answers an error, and the failed aggregation
// catches up once it recovers, with nothing lost. With its lease readable
// it gets as far as its fold state, and the generation the tick closes
// meanwhile must still reach it later.
func TestTickIsolatesAggregations(t *testing.T) {
	tests := []struct {
		name   string
		except string // a path suffix under the prefix that stays readable
	}{
		{name: "every document of the aggregation unavailable"},
		{name: "lease readable, window state unavailable", except: "/control/lease"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testTickIsolates(t, tt.except) })
	}
}

func testTickIsolates(t *testing.T, except string) {
	ctx := context.Background()
	hora, sku := window.Defaults(), skuSpec()
	store := streamtest.NewRecorder(newBoltStore(t))
	sink := streamtest.NewSink()
	p := newProcessor(t, store, sink, hora, sku)
	mustHandle(t, p, orderDelivery("P-1", "ES", "10.00", at(17, 5)), at(17, 10))
	panes := func(s window.Spec) int {
		ps, err := sink.PanesOf(s)
		if err != nil {
			t.Fatal(err)
		}
		return len(ps)
	}

	// Every document of sku's aggregation but except, when set, fails to read.
	store.FailGets(func(path string) bool {
		return strings.HasPrefix(path, "aggregations/"+sku.Name+"/") && (except == "" || !strings.HasSuffix(path, except))
	})
	tr, err := p.Tick(ctx, at(17, 12))
	if err == nil || !strings.Contains(err.Error(), sku.Name) || strings.Contains(err.Error(), "aggregation "+hora.Name) {
		t.Fatalf("tick error %v, want one naming %s only", err, sku.Name)
	}
	if n := panes(hora); n != 1 || len(tr.Aggregations[0].Panes) != 1 {
		t.Fatalf("%s panes %d while %s failed, want its EARLY pane", hora.Name, n, sku.Name)
	}
	if n := len(tr.Aggregations[1].Panes); n != 0 {
		t.Fatalf("%s emitted %d panes while its state failed", sku.Name, n)
	}
	store.FailGets(nil)

	sink.FailTable(stream.PanesTable(sku.Name), true)
	if _, err := p.Tick(ctx, at(17, 13)); err == nil || !strings.Contains(err.Error(), stream.PanesTable(sku.Name)) {
		t.Fatalf("tick error %v, want the failing table named", err)
	}
	mustHandle(t, p, orderDelivery("P-2", "ES", "1.00", at(17, 6)), at(17, 14))
	if _, err := p.Tick(ctx, at(17, 16)); err == nil {
		t.Fatal("tick with a failing table answered success")
	}
	if n := panes(hora); n != 2 {
		t.Fatalf("%s panes %d while %s's table failed, want 2", hora.Name, n, sku.Name)
	}
	if n := panes(sku); n != 0 {
		t.Fatalf("%s panes %d through a failing table", sku.Name, n)
	}

	sink.FailTable(stream.PanesTable(sku.Name), false)
	mustTick(t, p, at(17, 17))
	ps, err := sink.PanesOf(sku)
	if err != nil {
		t.Fatal(err)
	}
	// The four windows of 17:05 and 17:06: EARLY with P-1, then again
	// with P-1 and P-2 (the first emitted while the table failed, kept in
	// the outbox until it recovered).
	if len(ps) != 8 {
		t.Fatalf("%s panes after recovery: %+v, want two per window of the four", sku.Name, ps)
	}
	for _, pn := range ps {
		want := int64(1)
		if pn.Index == 1 {
			want = 2
		}
		if pn.Measures.Pedidos != want || pn.Index > 1 {
			t.Errorf("pane %+v, want index 0 with P-1, index 1 with both orders", pn)
		}
	}
	// The other aggregation counted each order once, too.
	hp, err := sink.PanesOf(hora)
	if err != nil {
		t.Fatal(err)
	}
	if last := hp[len(hp)-1]; last.Measures.Pedidos != 2 || last.Index != 1 {
		t.Errorf("%s last pane %+v, want the second pane with both orders", hora.Name, last)
	}
}

// TestLaggingAggregationCatchesUp: an aggregation whose documents failed
// for more than maxFoldGens (60) ticks adds the generations it missed 60 a
// tick, at the W it had and without panes, then folds the rest, advances
// and counts every order once.
func TestLaggingAggregationCatchesUp(t *testing.T) {
	hora, sku := window.Defaults(), skuSpec()
	store := streamtest.NewRecorder(newBoltStore(t))
	sink := streamtest.NewSink()
	p := newProcessor(t, store, sink, hora, sku)
	store.FailGets(func(path string) bool { return strings.HasPrefix(path, "aggregations/"+sku.Name+"/") })
	want := map[time.Time]int64{} // orders per window start of sku
	start := at(12, 0)
	for i := range 65 {
		now := start.Add(time.Duration(i) * time.Minute)
		event := now.Add(-time.Minute)
		mustHandle(t, p, orderDelivery(fmt.Sprintf("P-%d", i), "ES", "1.00", event), now)
		for _, w := range sku.WindowsOf(event) {
			want[w.Start]++
		}
		if _, err := p.Tick(context.Background(), now.Add(30*time.Second)); err == nil {
			t.Fatalf("tick %d answered success with %s unreadable", i, sku.Name)
		}
	}
	store.FailGets(nil)

	now := start.Add(66 * time.Minute)
	tr := mustTick(t, p, now)
	if got := tr.Aggregations[1]; len(got.Panes) != 0 || !got.Watermark.Equal(got.WatermarkBefore) {
		t.Fatalf("first tick after recovery: %d panes, W %s -> %s; want a catch-up: no panes, W kept",
			len(got.Panes), got.WatermarkBefore, got.Watermark)
	}
	for i := 1; i <= 6; i++ { // the rest of the generations, then W past every window's end and expiry
		mustTick(t, p, now.Add(time.Duration(i)*time.Hour))
	}
	ps, err := sink.PanesOf(sku)
	if err != nil {
		t.Fatal(err)
	}
	got := map[time.Time]int64{}
	for _, pn := range ps { // ACCUMULATING: the newest pane of a window holds its total
		got[pn.WindowStart] = max(got[pn.WindowStart], pn.Measures.Pedidos)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s orders per window after catching up (-want +got):\n%s", sku.Name, diff)
	}
}
