package streamtest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// testHeadroom: window totals hold BigQuery NUMERIC's range. The order that
// would take a key's total past it is accepted by Handle (an order
// transaction does not read the totals) and dead-lettered by the fold, in
// that aggregation only, with the reason; the others are counted and the
// tick emits every pane (a total in the window state is never out of
// range).
func testHeadroom(t *testing.T, en env) {
	t.Run("five orders of 9,000,000,000 sum exactly", func(t *testing.T) {
		r := newRig(t, en, window.Defaults())
		s := &windowtest.Story{}
		for _, id := range []string{"P-1", "P-2", "P-3", "P-4", "P-5"} {
			accepted(t, r, s.Deliver("18:30", id, "ES", "18:25", "9000000000", 1))
		}
		tickOK(t, r, "18:32")
		tickOK(t, r, "19:12")
		want := []string{
			"18:00 ES #0 EARLY importe=45000000000 pedidos=5 unidades=5",
			"18:00 ES #1 ON_TIME importe=45000000000 pedidos=5 unidades=5",
		}
		if diff := cmp.Diff(want, paneLines(r.panes())); diff != "" {
			t.Errorf("panes (-want +got):\n%s", diff)
		}
	})

	t.Run("the order that would leave NUMERIC is dead-lettered by the fold", func(t *testing.T) {
		const agg = "ventas_hora_pais"
		r := newRig(t, en, window.Defaults())
		s := &windowtest.Story{}
		const big = "30000000000000000000000000000" // 3e28: the fourth would pass 10^29
		accepted(t, r, s.Deliver("18:30", "P-1", "ES", "18:25", big, 1))
		accepted(t, r, s.Deliver("18:30", "P-2", "ES", "18:26", big, 1))
		accepted(t, r, s.Deliver("18:30", "P-f", "FR", "18:26", "1", 1))
		// The EARLY pane folds the first two into the window state: the
		// check adds to the key's total there.
		tickOK(t, r, "18:32")

		// One batch: the third fits, the fourth would pass the bound, the
		// fifth fits again. An order transaction does not read the window's
		// totals, so all three are accepted; the fold, which
		// has the totals, dead-letters the fourth in this aggregation.
		events := []windowtest.MultiEvent{
			s.Deliver("18:40", "P-3", "ES", "18:39", big, 1),
			s.Deliver("18:40", "P-4", "ES", "18:39", big, 1),
			s.Deliver("18:40", "P-5", "ES", "18:39", "5000000000000000000000000000", 1),
		}
		pushes := make([]stream.Push, len(events))
		for i, e := range events {
			pushes[i] = stream.Push{Delivery: Delivery(e), Now: e.Now}
		}
		res, err := r.p.HandleBatch(t.Context(), pushes)
		if err != nil {
			t.Fatalf("HandleBatch: %v; want the batch handled (2xx)", err)
		}
		var fates []stream.Fate
		for _, x := range res {
			fates = append(fates, x.Fate())
		}
		if diff := cmp.Diff([]stream.Fate{stream.Accepted, stream.Accepted, stream.Accepted}, fates); diff != "" {
			t.Fatalf("fates (-want +got):\n%s", diff)
		}
		if n := discardCount(r.sink); n != 0 {
			t.Errorf("%d rows dead-lettered before the tick; want none (the fold finds the overflow)", n)
		}

		tickOK(t, r, "18:42")
		ds, err := r.sink.Discards()
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 {
			t.Fatalf("dead-letter rows %+v; want one, P-4's", ds)
		}
		d := ds[0]
		start := at("18:00").UTC()
		wantReason := "invalid: aggregation " + agg + ": window " + start.Format(time.RFC3339) + " key \"ES\": "
		if d.ID != "overflow|"+agg+"|P-4" || d.PedidoID != "P-4" || d.Aggregation != agg || !d.WindowStart.Equal(start) {
			t.Errorf("dead letter %+v; want row overflow|%s|P-4 of P-4 in window %s", d, agg, start)
		}
		if !strings.HasPrefix(d.Reason, wantReason) || !strings.Contains(d.Reason, "outside NUMERIC's range") {
			t.Errorf("reason %q; want it to start with %q and name NUMERIC's range", d.Reason, wantReason)
		}
		// A redelivery is a duplicate of the accepted order: it is neither
		// counted nor dead-lettered again.
		again, err := r.p.Handle(t.Context(), Delivery(events[1]), at("18:43"))
		if err != nil || again.Fate() != stream.Duplicate {
			t.Errorf("redelivery of the dead-lettered order: %+v, %v; want a duplicate", again, err)
		}

		tickOK(t, r, "18:44")
		tickOK(t, r, "19:12")
		want := []string{
			"18:00 ES #0 EARLY importe=60000000000000000000000000000 pedidos=2 unidades=2",
			"18:00 ES #1 EARLY importe=95000000000000000000000000000 pedidos=4 unidades=4",
			"18:00 ES #2 ON_TIME importe=95000000000000000000000000000 pedidos=4 unidades=4",
			"18:00 FR #0 EARLY importe=1 pedidos=1 unidades=1",
			"18:00 FR #1 ON_TIME importe=1 pedidos=1 unidades=1",
		}
		if diff := cmp.Diff(want, paneLines(r.panes())); diff != "" {
			t.Errorf("panes (-want +got):\n%s", diff)
		}
		if n := discardCount(r.sink); n != 1 {
			t.Errorf("%d dead-letter rows at the end, want 1 (P-4's)", n)
		}
		res2 := tickOK(t, r, "21:15")
		if got := res2.Aggregations[0].Expired; got != 2 {
			t.Errorf("keys expired = %d, want 2", got)
		}
		r.noConflicts()
	})
}

func accepted(t *testing.T, r *rig, e windowtest.MultiEvent) stream.Result {
	t.Helper()
	res, err := r.p.Handle(t.Context(), Delivery(e), e.Now)
	if err != nil || res.Fate() != stream.Accepted {
		t.Fatalf("order %s: %+v, %v; want it accepted", e.Order.PedidoID, res, err)
	}
	return res
}
