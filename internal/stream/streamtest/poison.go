package streamtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// testPoisonCell: one (window, key) whose stored state cannot be read or is
// of another layout does not stop the tick. The other windows get their
// ON_TIME panes and expire, the tick succeeds and reports the cell with its
// error, the cell stays and is retried; once readable again it emits the
// ON_TIME pane it owes, with every order, and expires.
func testPoisonCell(t *testing.T, en env) {
	const agg = "ventas_hora_pais"
	tests := []struct {
		name string
		// coll is the collection of the document to corrupt, after the
		// first tick (cells exist then) or before it (deltas).
		coll        string
		beforeTick  bool
		corrupt     func([]byte) []byte
		wantErr     string
		wantOrderES string // the error a new ES order meets; "" when accepted
		wantES      []string
	}{
		{
			name:    "cell document does not decode",
			coll:    "windows",
			corrupt: func([]byte) []byte { return []byte(`{"state":"garbage"}`) },
			wantErr: "decode aggregations/" + agg + "/windows/",
			wantES:  []string{"#0 EARLY pedidos=1 unidades=1", "#1 ON_TIME pedidos=1 unidades=1"},
		},
		{
			name:    "cell of a newer layout",
			coll:    "windows",
			corrupt: func(b []byte) []byte { return bytes.Replace(b, []byte(`"layout":2`), []byte(`"layout":3`), 1) },
			wantErr: "state layout 3 found, this binary reads layouts 1 to 2",
			wantES:  []string{"#0 EARLY pedidos=1 unidades=1", "#1 ON_TIME pedidos=1 unidades=1"},
		},
		{
			name:       "delta document does not decode",
			coll:       "deltas",
			beforeTick: true,
			corrupt:    func([]byte) []byte { return []byte(`{"part":7}`) },
			wantErr:    "decode aggregations/" + agg + "/deltas/",
			// The order path reads the delta it adds to and fails, so
			// Pub/Sub redelivers the order instead of it being mis-counted.
			wantOrderES: "decode aggregations/" + agg + "/deltas/",
			wantES:      []string{"#0 ON_TIME pedidos=1 unidades=1"},
		},
		{
			name:        "delta of a newer layout",
			coll:        "deltas",
			beforeTick:  true,
			corrupt:     func(b []byte) []byte { return bytes.Replace(b, []byte(`"layout":2`), []byte(`"layout":3`), 1) },
			wantErr:     "state layout 3 found, this binary reads layouts 1 to 2",
			wantOrderES: "state layout 3 found, this binary reads layouts 1 to 2",
			wantES:      []string{"#0 ON_TIME pedidos=1 unidades=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			r := newRig(t, en, window.Defaults())
			s := &story{}
			r.play(t, nil,
				s.deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				s.deliver("18:30", "P-2", "FR", "18:26", "200", 2),
				s.deliver("18:30", "P-3", "DE", "18:27", "300", 3))

			var path string
			var original []byte
			corrupt := func() {
				path, original = esDocument(t, r.store, "aggregations/"+agg+"/"+tt.coll)
				putRaw(t, r.store, path, tt.corrupt(original))
			}
			if tt.beforeTick {
				corrupt()
			}
			tickOK(t, r, "18:32")
			if !tt.beforeTick {
				corrupt()
			}
			// A new ES order: accepted into a new delta when the cell is
			// corrupt (orders do not read the cell before W reaches the
			// end); refused when the delta it adds to is unreadable.
			_, err := r.p.Handle(ctx, Delivery(s.deliver("18:40:30", "P-4", "ES", "18:39", "1", 0)), at("18:40:30"))
			if tt.wantOrderES == "" && err != nil {
				t.Fatalf("ES order with a corrupt cell: %v; want it accepted", err)
			}
			if tt.wantOrderES != "" && (err == nil || !strings.Contains(err.Error(), tt.wantOrderES)) {
				t.Fatalf("ES order with an unreadable delta: error %v; want one containing %q (non-2xx: redelivered)", err, tt.wantOrderES)
			}
			esOrders, esUnits := 1, 1
			if err == nil {
				esOrders++
			}

			// W reaches the end: FR and DE get their ON_TIME panes.
			res := tickOK(t, r, "19:12")
			checkFailing(t, res.Aggregations[0].Failing, tt.wantErr)
			// W reaches the expiry: FR and DE expire, ES stays.
			res = tickOK(t, r, "21:15")
			checkFailing(t, res.Aggregations[0].Failing, tt.wantErr)
			if got := res.Aggregations[0].Expired; got != 2 {
				t.Errorf("windows expired at 21:15 = %d, want 2 (FR and DE)", got)
			}
			st, err := r.p.Status(ctx, at("21:16"))
			if err != nil {
				t.Fatalf("status with a failing cell: %v", err)
			}
			if got := st[0].Failing; len(got) == 0 || !strings.Contains(got[len(got)-1].Error, tt.wantErr) || got[len(got)-1].Key != "ES" {
				t.Errorf("status failing = %+v; want the ES cell with %q", got, tt.wantErr)
			}
			if len(st[0].OpenWindows) != 1 || st[0].OpenWindows[0].Key != "ES" {
				t.Errorf("open windows after expiry = %+v; want only the failing ES cell, kept", st[0].OpenWindows)
			}

			// Repaired (the right binary deployed): the ES window emits
			// the ON_TIME pane it owes with every order, then expires.
			putRaw(t, r.store, path, original)
			res = tickOK(t, r, "21:20")
			if f := res.Aggregations[0].Failing; len(f) != 0 {
				t.Errorf("failing after the repair: %+v", f)
			}
			if got := res.Aggregations[0].Expired; got != 1 {
				t.Errorf("windows expired after the repair = %d, want 1 (ES)", got)
			}
			if n := r.open(agg); n != 0 {
				t.Errorf("%d cells left after every window expired", n)
			}
			wantES := tt.wantES
			if esOrders == 2 {
				last := fmt.Sprintf("pedidos=%d unidades=%d", esOrders, esUnits)
				wantES = append(wantES[:len(wantES)-1:len(wantES)-1], strings.Replace(wantES[len(wantES)-1], "pedidos=1 unidades=1", last, 1))
			}
			want := map[string][]string{
				"ES": wantES,
				"FR": {"#0 EARLY pedidos=1 unidades=2", "#1 ON_TIME pedidos=1 unidades=2"},
				"DE": {"#0 EARLY pedidos=1 unidades=3", "#1 ON_TIME pedidos=1 unidades=3"},
			}
			if diff := cmp.Diff(want, paneLines(r.panes("pais"))); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			r.noConflicts()
		})
	}

	t.Run("store failure is an error of the tick", func(t *testing.T) {
		r := newRig(t, en, window.Defaults())
		s := &story{}
		r.play(t, nil, s.deliver("18:30", "P-1", "ES", "18:25", "100", 1))
		r.store.FailDeletes(func(p string) bool { return strings.Contains(p, "/deltas/") })
		res, err := r.p.Tick(t.Context(), at("18:32"))
		if !errors.Is(err, ErrInjected) || errors.Is(err, stream.ErrUnreadableState) {
			t.Errorf("tick with the store failing: %v; want the injected error, not an unreadable cell (non-2xx, retried)", err)
		}
		if f := res.Aggregations[0].Failing; len(f) != 0 {
			t.Errorf("a store failure reported as failing cells: %+v", f)
		}
	})
}

func tickOK(t *testing.T, r *rig, now string) stream.TickResult {
	t.Helper()
	res, err := r.p.Tick(t.Context(), at(now))
	if err != nil {
		t.Fatalf("tick at %s with one failing cell: %v; want success for the others (2xx)", now, err)
	}
	return res
}

// checkFailing wants the ES cell reported with wantErr, and nothing else
// but documents of it.
func checkFailing(t *testing.T, got []stream.FailingCell, wantErr string) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("no failing cell reported; want the ES cell with %q", wantErr)
	}
	for _, f := range got {
		if f.Key != "ES" || f.Aggregation != "ventas_hora_pais" || !strings.Contains(f.Error, wantErr) || f.WindowStart.IsZero() {
			t.Errorf("failing %+v; want the ES cell with %q", f, wantErr)
		}
	}
}

// esDocument finds the ES document of coll and its bytes.
func esDocument(t *testing.T, s docstore.Store, coll string) (string, []byte) {
	t.Helper()
	docs, err := s.List(context.Background(), coll)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		var k struct{ Key string }
		if json.Unmarshal(d.Data, &k) == nil && k.Key == "ES" {
			return d.Path, d.Data
		}
	}
	t.Fatalf("no ES document in %s (%d documents)", coll, len(docs))
	return "", nil
}

// putRaw writes data at path through the store's port, as a bad deploy or
// a hand edit would.
func putRaw(t *testing.T, s docstore.Store, path string, data []byte) {
	t.Helper()
	err := s.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: path, Data: data})
	})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// paneLines are the panes per key, in order, without the amounts.
func paneLines(ps []window.Pane) map[string][]string {
	out := map[string][]string{}
	for _, p := range ps {
		out[p.Key] = append(out[p.Key], fmt.Sprintf("#%d %s pedidos=%d unidades=%d", p.Index, p.Timing, p.Measures.Pedidos, p.Measures.Unidades))
	}
	return out
}
