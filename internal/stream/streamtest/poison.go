package streamtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// testPoisonCell: a window whose stored state cannot be read does not stop
// the tick, which answers 2xx and reports it; the other windows get their
// panes and expire; its orders meanwhile, on time or late, are accepted and
// parked; it is not expired while it fails. Once readable, the next tick
// folds the parked orders into the ON_TIME pane it owes, then expires it.
// A store failure, or a dedup record that does not decode, is instead an
// error of the tick (non-2xx, retried), never a failing window.
func testPoisonCell(t *testing.T, en env) {
	const agg = "ventas_hora_pais"
	tests := []struct {
		name    string
		corrupt func([]byte) []byte
		wantErr string // %s: the state document's path
	}{
		{
			name:    "state document does not decode",
			corrupt: func([]byte) []byte { return []byte(`{"layout":3,"keys":"garbage"}`) },
			wantErr: "decode %s: ",
		},
		{
			name:    "state document of a newer layout",
			corrupt: func(b []byte) []byte { return bytes.Replace(b, []byte(`"layout":3`), []byte(`"layout":4`), 1) },
			wantErr: "%s: state layout 4 found, this binary reads layout 3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, en, window.Defaults())
			s := &windowtest.Story{}
			// Window 18:00, to poison, holds two keys in one document.
			r.play(t, nil,
				s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				s.Deliver("18:30", "P-2", "FR", "18:26", "200", 2))
			tickOK(t, r, "18:32") // EARLY panes: the state document exists now

			path := "aggregations/" + agg + "/state/" + at("18:00").UTC().Format("20060102T150405Z") + "_0"
			original := ReadDoc(t, r.store, path)
			if !original.Exists {
				t.Fatalf("no state document %s after the first fold", path)
			}
			WriteDoc(t, r.store, docstore.Doc{Path: path, Data: tt.corrupt(original.Data)})
			wantErr := fmt.Sprintf(tt.wantErr, path)

			// An on-time order for the poisoned window: accepted.
			accepted(t, r, s.Deliver("18:40", "P-3", "ES", "18:39", "400", 4))
			res := tickOK(t, r, "18:42")
			checkFailing(t, res.Aggregations[0], path, wantErr, at("18:42"))
			if n := r.count("aggregations/" + agg + "/parked"); n == 0 {
				t.Errorf("no parked document after a fold into the failing window: P-3 would be lost")
			}

			// DE's 19:00 window gets its EARLY pane while 18:00 fails; one
			// more order for 18:00 is parked in a later generation.
			accepted(t, r, s.Deliver("19:06", "P-4", "DE", "19:05", "800", 8))
			accepted(t, r, s.Deliver("19:06", "P-5", "ES", "18:58", "1600", 16))
			res = tickOK(t, r, "19:08")
			checkFailing(t, res.Aggregations[0], path, wantErr, at("18:42"))

			// W = 19:10 passes 18:00's end: its ON_TIME pane is owed.
			res = tickOK(t, r, "19:20")
			checkFailing(t, res.Aggregations[0], path, wantErr, at("18:42"))
			// A late order for it is accepted late and parked, not refused.
			late := accepted(t, r, s.Deliver("19:21", "P-6", "FR", "18:50", "3200", 32))
			if o := late.Aggregations[0]; o.Lateness != window.Late {
				t.Errorf("late order for the failing window: %+v, want accepted late", o)
			}

			// W = 20:05: DE's window gets its ON_TIME pane.
			res = tickOK(t, r, "20:15")
			checkFailing(t, res.Aggregations[0], path, wantErr, at("18:42"))
			// W = 21:05 passes 18:00's expiry: a failing window is kept.
			res = tickOK(t, r, "21:15")
			checkFailing(t, res.Aggregations[0], path, wantErr, at("18:42"))
			if got := res.Aggregations[0].Expired; got != 0 {
				t.Errorf("keys expired at 21:15 = %d, want 0 (18:00 is failing, 19:00 expires at 22:00)", got)
			}

			// Status shows the window failing, and the open ones it reads.
			st, err := r.p.Status(t.Context(), at("21:16"))
			if err != nil {
				t.Fatalf("status with a failing window: %v", err)
			}
			if f := st[0].Failing; len(f) == 0 || slices.ContainsFunc(f, func(f stream.FailingWindow) bool {
				return f.Path != path || !strings.Contains(f.Error, wantErr)
			}) {
				t.Errorf("status failing = %+v; want the window of %s with %q", f, path, wantErr)
			}
			var open []string
			for _, w := range st[0].OpenWindows {
				open = append(open, w.Start.In(windowtest.Spain).Format("15:04")+" "+w.Key)
			}
			if diff := cmp.Diff([]string{"19:00 DE"}, open); diff != "" {
				t.Errorf("status open windows (-want +got):\n%s", diff)
			}

			// Repaired: the ON_TIME pane 18:00 owes covers every accepted
			// order, and the window expires.
			WriteDoc(t, r.store, original)
			res = tickOK(t, r, "21:20")
			if ag := res.Aggregations[0]; len(ag.Failing) != 0 || ag.FailingCells != 0 {
				t.Errorf("failing after the repair: %d %+v", ag.FailingCells, ag.Failing)
			}
			if got := res.Aggregations[0].Expired; got != 2 {
				t.Errorf("keys expired after the repair = %d, want 2 (ES and FR of 18:00)", got)
			}
			if n := r.count("aggregations/" + agg + "/parked"); n != 0 {
				t.Errorf("%d parked documents left after the repair", n)
			}
			res = tickOK(t, r, "22:15") // W = 22:05
			if got := res.Aggregations[0].Expired; got != 1 {
				t.Errorf("keys expired at 22:15 = %d, want 1 (DE of 19:00)", got)
			}
			if n := r.count("aggregations/" + agg + "/state"); n != 0 {
				t.Errorf("%d state documents left after every window expired", n)
			}

			want := []string{
				"18:00 ES #0 EARLY importe=100 pedidos=1 unidades=1",
				"18:00 ES #1 ON_TIME importe=2100 pedidos=3 unidades=21",
				"18:00 FR #0 EARLY importe=200 pedidos=1 unidades=2",
				"18:00 FR #1 ON_TIME importe=3400 pedidos=2 unidades=34",
				"19:00 DE #0 EARLY importe=800 pedidos=1 unidades=8",
				"19:00 DE #1 ON_TIME importe=800 pedidos=1 unidades=8",
			}
			if diff := cmp.Diff(want, paneLines(r.panes())); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			if n := discardCount(r.sink); n != 0 {
				t.Errorf("%d orders dead-lettered; want none (every order was accepted and counted)", n)
			}
			r.noConflicts()
		})
	}

	t.Run("dedup record does not decode", func(t *testing.T) { testPoisonRecord(t, en) })

	// Store failures: the tick answers an error and reports no failing
	// window; once the store works, the next tick does what it did not.
	early := "18:00 ES #0 EARLY importe=100 pedidos=1 unidades=1"
	failures := []struct {
		name            string
		before          []string // ticks before the one at failAt, which fail makes fail
		fail            func(r *Recorder)
		failAt, againAt string
		want            []string
	}{
		{name: "reading a window's state", failAt: "18:32", againAt: "18:33", want: []string{early},
			fail: func(r *Recorder) { r.FailGets(func(p string) bool { return strings.Contains(p, "/state/") }) }},
		{name: "acquiring the lease", failAt: "18:32", againAt: "18:33", want: []string{early},
			fail: func(r *Recorder) { r.FailGets(isLease) }},
		{name: "listing a generation of records", failAt: "18:32", againAt: "18:33", want: []string{early},
			fail: func(r *Recorder) { r.FailListTag(true) }},
		{name: "deleting an expired window's state", before: []string{"18:32"}, failAt: "21:15", againAt: "21:16",
			want: []string{early, "18:00 ES #1 ON_TIME importe=100 pedidos=1 unidades=1"},
			fail: func(r *Recorder) { r.FailDeletes(func(p string) bool { return strings.Contains(p, "/state/") }) }},
	}
	for _, tt := range failures {
		t.Run("store failure is an error of the tick: "+tt.name, func(t *testing.T) {
			r := newRig(t, en, window.Defaults())
			s := &windowtest.Story{}
			r.play(t, nil, s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1))
			for _, now := range tt.before {
				tickOK(t, r, now)
			}
			tt.fail(r.store)
			res, err := r.p.Tick(t.Context(), at(tt.failAt))
			if !errors.Is(err, ErrInjected) || errors.Is(err, stream.ErrUnreadableState) {
				t.Errorf("tick with the store failing: %v; want the injected error, not unreadable state (non-2xx, retried)", err)
			}
			if ag := res.Aggregations[0]; len(ag.Failing) != 0 || ag.FailingCells != 0 {
				t.Errorf("a store failure reported as failing windows: %d %+v", ag.FailingCells, ag.Failing)
			}
			r.store.Heal()
			tickOK(t, r, tt.againAt)
			if diff := cmp.Diff(tt.want, paneLines(r.panes())); diff != "" {
				t.Errorf("panes once the store works (-want +got):\n%s", diff)
			}
			r.noConflicts()
		})
	}
}

// testPoisonRecord: a dedup record that does not decode names no window, and
// skipping it would drop an accepted order for good. So the tick returns an
// error naming it, holding W and the fold of its generation until it is
// repaired; orders keep being accepted meanwhile, and the next tick after
// the repair folds them all. A redelivery of the broken order fails too.
func testPoisonRecord(t *testing.T, en env) {
	ctx := t.Context()
	r := newRig(t, en, window.Defaults())
	s := &windowtest.Story{}
	p2 := s.Deliver("18:30", "P-2", "FR", "18:26", "200", 2)
	r.play(t, nil, s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1), p2)

	docs := r.list("stream/dedup/orders")
	var original docstore.Doc
	for _, d := range docs {
		var rec struct {
			PedidoID string `json:"pedido_id"`
		}
		if json.Unmarshal(d.Data, &rec) == nil && rec.PedidoID == "P-2" {
			original = d
		}
	}
	if original.Path == "" || original.Tag == "" {
		t.Fatalf("no tagged dedup record of P-2 among %d records (%+v)", len(docs), original)
	}
	// The tag is kept, as a hand edit in the console would.
	broken := original
	broken.Data = []byte(`{"pedido_id":"P-2","aggregations":"garbage"}`)
	WriteDoc(t, r.store, broken)

	for _, now := range []string{"18:32", "18:42"} {
		_, err := r.p.Tick(ctx, at(now))
		if err == nil || !errors.Is(err, stream.ErrUnreadableState) || !strings.Contains(err.Error(), original.Path) {
			t.Errorf("tick at %s with an unreadable record: %v; want an error naming %s (non-2xx, retried)", now, err, original.Path)
		}
		if now == "18:32" {
			accepted(t, r, s.Deliver("18:40", "P-3", "DE", "18:39", "300", 3))
		}
	}
	if n := paneCount(r.sink); n != 0 {
		t.Errorf("%d panes while a record of the generation is unreadable; want none (its generation is not folded)", n)
	}
	if _, err := r.p.Handle(ctx, Delivery(p2), at("18:43")); err == nil {
		t.Errorf("redelivery of the order whose record is unreadable: accepted; want an error (redelivered later)")
	}

	WriteDoc(t, r.store, original)
	tickOK(t, r, "18:45")
	tickOK(t, r, "19:12")
	want := []string{
		"18:00 DE #0 EARLY importe=300 pedidos=1 unidades=3",
		"18:00 DE #1 ON_TIME importe=300 pedidos=1 unidades=3",
		"18:00 ES #0 EARLY importe=100 pedidos=1 unidades=1",
		"18:00 ES #1 ON_TIME importe=100 pedidos=1 unidades=1",
		"18:00 FR #0 EARLY importe=200 pedidos=1 unidades=2",
		"18:00 FR #1 ON_TIME importe=200 pedidos=1 unidades=2",
	}
	if diff := cmp.Diff(want, paneLines(r.panes())); diff != "" {
		t.Errorf("panes after the repair (-want +got):\n%s", diff)
	}
	if res, err := r.p.Handle(ctx, Delivery(p2), at("19:13")); err != nil || res.Fate() != stream.Duplicate || res.Aggregations[0].Recorded != stream.Accepted {
		t.Errorf("redelivery after the repair: %+v, %v; want a duplicate", res, err)
	}
	r.noConflicts()
}

func tickOK(t *testing.T, r *rig, now string) stream.TickResult {
	t.Helper()
	res, err := r.p.Tick(t.Context(), at(now))
	if err != nil {
		t.Fatalf("tick at %s: %v; want success (2xx), even with a failing window", now, err)
	}
	return res
}

// checkFailing wants exactly the poisoned window reported, failing since
// the first tick that met it.
func checkFailing(t *testing.T, at stream.AggregationTick, path, wantErr string, since time.Time) {
	t.Helper()
	if at.FailingCells != 1 || len(at.Failing) != 1 {
		t.Fatalf("failing %d %+v; want the window of %s with %q", at.FailingCells, at.Failing, path, wantErr)
	}
	f := at.Failing[0]
	start := since.Truncate(time.Hour)
	if f.Aggregation != "ventas_hora_pais" || f.Path != path || !f.WindowStart.Equal(start) ||
		!f.WindowEnd.Equal(start.Add(time.Hour)) || !strings.Contains(f.Error, wantErr) || !f.Since.Equal(since) {
		t.Errorf("failing %+v; want the window %s of %s with %q since %s", f, start, path, wantErr, since)
	}
}

func (r *rig) count(coll string) int {
	r.t.Helper()
	return len(r.list(coll))
}

func (r *rig) list(coll string) []docstore.Doc {
	r.t.Helper()
	docs, err := r.store.List(context.Background(), coll)
	if err != nil {
		r.t.Fatalf("list %s: %v", coll, err)
	}
	return docs
}

func ReadDoc(t testing.TB, s docstore.Store, path string) docstore.Doc {
	t.Helper()
	var d docstore.Doc
	err := s.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		d = docs[0]
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return d
}

// WriteDoc writes d through the store's port, as a bad deploy or a hand edit
// would.
func WriteDoc(t testing.TB, s docstore.Store, d docstore.Doc) {
	t.Helper()
	d.Exists = false
	err := s.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(d)
	})
	if err != nil {
		t.Fatalf("write %s: %v", d.Path, err)
	}
}

// paneLines renders the panes as "<hh:mm in Spain> <key> #<index> <timing>
// importe=.. pedidos=.. unidades=..", sorted.
func paneLines(ps []window.Pane) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s #%d %s importe=%s pedidos=%d unidades=%d",
			p.WindowStart.In(windowtest.Spain).Format("15:04"), p.Key, p.Index, p.Timing,
			p.Measures.Importe, p.Measures.Pedidos, p.Measures.Unidades))
	}
	slices.Sort(out)
	return out
}
