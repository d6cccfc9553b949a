package stream_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestStatus: Status and ReadWatermark read W, the open (window, key)s, the
// rows (not documents) waiting in the outbox and the failing windows:
// nothing before the first order or while the orders wait for a tick; a
// window whose state stops reading leaves the open list for Failing, where
// the fold's report (with since when) replaces the bare decode error.
// Status writes nothing.
func TestStatus(t *testing.T) {
	ctx := context.Background()
	st := newBoltStore(t)
	sink := streamtest.NewSink()
	hora := window.Defaults()
	p := newProcessor(t, st, sink, hora)
	w17 := window.Window{Start: at(17, 0), End: at(18, 0)}
	open := func(w window.Window, key string, panes int64, on window.OnTimeStatus) stream.OpenWindow {
		return stream.OpenWindow{Start: w.Start, End: w.End, Key: key, Panes: panes, OnTime: on}
	}
	status := func(t *testing.T, now time.Time) stream.AggregationStatus {
		t.Helper()
		all, err := p.Status(ctx, now)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		if len(all) != 1 {
			t.Fatalf("Status answered %d aggregations, want 1", len(all))
		}
		return all[0]
	}
	check := func(t *testing.T, want stream.AggregationStatus, got stream.AggregationStatus) {
		t.Helper()
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		wm, err := stream.ReadWatermark(ctx, st, hora.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !wm.Equal(want.Watermark) {
			t.Errorf("ReadWatermark = %s, want %s (as Status)", wm, want.Watermark)
		}
	}

	empty := stream.AggregationStatus{Aggregation: hora.Name}
	check(t, empty, status(t, at(17, 9)))
	if d := streamtest.ReadDoc(t, st, "stream/control"); d.Exists {
		t.Fatalf("Status created stream/control: it must write nothing")
	}

	// Orders wait in their records for the tick: nothing open yet.
	for _, o := range []struct {
		id, pais string
		event    time.Time
	}{{"P-1", "ES", at(17, 5)}, {"P-2", "FR", at(17, 15)}, {"P-6", "ES", at(17, 19)}} {
		mustHandle(t, p, orderDelivery(o.id, o.pais, "1.00", o.event), o.event.Add(5*time.Minute))
	}
	check(t, empty, status(t, at(17, 24)))

	// The sink fails: the tick's two EARLY panes wait in one outbox
	// document, and Status counts its rows, as the tick's Pending does.
	sink.SetFailing(true)
	res, err := p.Tick(ctx, at(17, 25))
	if err == nil {
		t.Fatal("tick with a failing sink answered no error")
	}
	ticked := res.Aggregations[0]
	if ticked.Watermark.IsZero() || len(ticked.Failing) > 0 || len(ticked.Panes) != 2 || ticked.Pending != 2 {
		t.Fatalf("first tick: %+v, want 2 EARLY panes left in the outbox", ticked)
	}
	if docs, err := st.List(ctx, "aggregations/"+hora.Name+"/outbox"); err != nil || len(docs) != 1 {
		t.Fatalf("%d outbox documents (%v), want the tick's one", len(docs), err)
	}
	panes := map[string]int64{}
	for _, pn := range ticked.Panes {
		panes[pn.Key] = pn.Index + 1
	}
	after := stream.AggregationStatus{Aggregation: hora.Name,
		Watermark: ticked.Watermark, MaxEventTime: at(17, 19), LastAccepted: at(17, 24), Lag: at(17, 30).Sub(ticked.Watermark),
		OpenWindows: []stream.OpenWindow{open(w17, "ES", panes["ES"], window.OnTimePending), open(w17, "FR", panes["FR"], window.OnTimePending)},
		Outbox:      2}
	check(t, after, status(t, at(17, 30)))
	sink.SetFailing(false)

	// Window 17:00's state stops reading: Status reports its part, then,
	// once a tick met it, the fold's report with since when.
	part := "aggregations/" + hora.Name + "/state/20260314T170000Z_0"
	d := streamtest.ReadDoc(t, st, part)
	if !d.Exists {
		t.Fatalf("no state document %s after the first tick", part)
	}
	d.Data = bytes.Replace(d.Data, []byte(`"layout":3`), []byte(`"layout":4`), 1)
	streamtest.WriteDoc(t, st, d)
	layoutErr := part + ": state layout 4 found, this binary reads layout 3"
	broken := after
	broken.OpenWindows = nil
	broken.Failing = []stream.FailingWindow{{Aggregation: hora.Name, Path: part, WindowStart: w17.Start, WindowEnd: w17.End, Error: layoutErr}}
	check(t, broken, status(t, at(17, 30)))

	// An order for it makes the next tick visit it.
	mustHandle(t, p, orderDelivery("P-7", "PT", "2.00", at(17, 26)), at(17, 31))
	res = mustTick(t, p, at(17, 33))
	if tk := res.Aggregations[0]; tk.FailingCells != 1 {
		t.Fatalf("tick at 17:33 reports %d failing windows %+v, want 17:00", tk.FailingCells, tk.Failing)
	}
	want := broken
	want.Outbox = 0 // the tick flushed it
	want.Watermark, want.Lag = res.Aggregations[0].Watermark, at(17, 40).Sub(res.Aggregations[0].Watermark)
	want.MaxEventTime, want.LastAccepted = at(17, 26), at(17, 31)
	want.Failing = []stream.FailingWindow{{Aggregation: hora.Name, Path: part, WindowStart: w17.Start, WindowEnd: w17.End, Error: layoutErr, Since: at(17, 33)}}
	check(t, want, status(t, at(17, 40)))
}
