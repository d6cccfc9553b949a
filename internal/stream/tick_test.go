package stream

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

type discardSink struct{}

func (discardSink) Append(context.Context, string, []warehouse.Row) error { return nil }

// TestTickCellReadsEveryDeltaForTheWatermarkItReads is the interleaving of
// two overlapping ticks: this tick planned its visit with a W short of the
// window's end (or expiry), so it listed only some deltas, and a
// concurrent tick moved W on before the visit's transaction ran, while an
// order wrote a delta the listing missed. The pane the W read in the
// transaction makes due must cover that delta too: an expiry that left it
// behind recreated the cell at pane index 0 (two panes under one identity,
// and orders missing from the view), an ON_TIME pane without it missed
// on-time orders.
func TestTickCellReadsEveryDeltaForTheWatermarkItReads(t *testing.T) {
	spec := window.Defaults()
	spec.WindowSize, spec.OutOfOrderness, spec.IdleTimeout = time.Minute, 0, 30*time.Second
	spec.EarlyDelay, spec.AllowedLateness, spec.LateDelay, spec.Shards = 0, time.Minute, 30*time.Second, 3
	start := time.Date(2026, 3, 14, 17, 6, 0, 0, time.UTC)
	w := window.Window{Start: start, End: start.Add(time.Minute)}
	wk := window.WindowKey{Window: w, Key: "ES"}
	one := window.Measures{Importe: numeric.FromNanos(1e9), Pedidos: 1, Unidades: 1}
	tests := []struct {
		name  string
		wm    time.Time
		state window.PaneState
		// fresh, listedW: the visit's listing was taken after W reached
		// listedW (relist).
		fresh       bool
		listedW     time.Time
		wantTiming  window.Timing
		wantIndex   int64
		wantGone    bool
		wantPedidos int64
		wantLeft    int
	}{
		{name: "W reached expiry since the tick planned", wm: w.End.Add(90 * time.Second),
			state: window.PaneState{NextIndex: 2, OnTime: window.OnTimeDone, Emitted: one}, wantTiming: window.TimingLate, wantIndex: 2, wantGone: true, wantPedidos: 3},
		{name: "W reached the end since the tick planned: ON_TIME owed", wm: w.End.Add(10 * time.Second),
			state: window.PaneState{NextIndex: 1, OnTime: window.OnTimePending, Emitted: one}, wantTiming: window.TimingOnTime, wantIndex: 1, wantPedidos: 3},
		// A listing taken once W had reached the end holds every delta of
		// an order that read a W short of it: delta 1 stands for a late
		// order's, written after the listing, which the next visit folds.
		{name: "listed after W reached the end: the listing is read, not every delta number", wm: w.End.Add(10 * time.Second),
			fresh: true, listedW: w.End.Add(10 * time.Second),
			state: window.PaneState{NextIndex: 1, OnTime: window.OnTimePending, Emitted: one}, wantTiming: window.TimingOnTime, wantIndex: 1, wantPedidos: 2, wantLeft: 1},
		{name: "listed after W reached the end, W reached expiry since: every delta", wm: w.End.Add(90 * time.Second),
			fresh: true, listedW: w.End.Add(10 * time.Second),
			state: window.PaneState{NextIndex: 2, OnTime: window.OnTimeDone, Emitted: one}, wantTiming: window.TimingLate, wantIndex: 2, wantGone: true, wantPedidos: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			store, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			p, err := New(store, discardSink{}, []window.Spec{spec}, func(string) bool { return true }, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			a := p.aggs[0]
			accepted := w.Start.Add(30 * time.Second)
			part := window.Shard{Measures: one, OnTime: true, PendingSince: accepted, MaxEventTime: accepted, LastAccepted: accepted}
			err = store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
				ws := window.WatermarkState{Watermark: tt.wm, MaxEventTime: tt.wm, LastAccepted: tt.wm}
				if err := set(tx, a.paths.watermark, ws, time.Time{}); err != nil {
					return err
				}
				c := cellDoc{WindowStart: w.Start, WindowEnd: w.End, Key: wk.Key, Shards: spec.Shards, State: tt.state,
					Folded: window.Shard{Measures: one, OnTime: true, Epoch: tt.state.NextIndex, MaxEventTime: accepted, LastAccepted: accepted}}
				if err := set(tx, a.paths.cell(wk), c, time.Time{}); err != nil {
					return err
				}
				for n := range 2 {
					d := deltaDoc{WindowStart: w.Start, WindowEnd: w.End, Key: wk.Key, N: n, Part: part}
					if err := set(tx, a.paths.delta(wk, n), d, time.Time{}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// Planned before W moved: only delta 0 listed, nothing due at
			// the window's end or expiry.
			v := &visit{wk: wk, listed: []string{a.paths.delta(wk, 0)}, fresh: tt.fresh, listedW: tt.listedW}
			if err := p.tickCell(ctx, a, v, tt.wm.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if v.pane == nil {
				t.Fatal("no pane")
			}
			left, err := store.List(ctx, a.paths.deltas)
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				Timing     window.Timing
				Index      int64
				Pedidos    int64
				Gone       bool
				DeltasLeft int
			}
			want := outcome{Timing: tt.wantTiming, Index: tt.wantIndex, Pedidos: tt.wantPedidos, Gone: tt.wantGone, DeltasLeft: tt.wantLeft}
			got := outcome{Timing: v.pane.Timing, Index: v.pane.Index, Pedidos: v.pane.Measures.Pedidos, Gone: v.gone, DeltasLeft: len(left)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tick of the cell (-want +got):\n%s", diff)
			}
		})
	}
}
