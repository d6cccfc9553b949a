package dashboard_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/window"
)

// processorDriver plays the story on the real stream processor.
type processorDriver struct {
	p     *stream.Processor
	n     int
	ticks []stream.TickResult
}

func (d *processorDriver) order(ctx context.Context, s step) error {
	d.n++
	_, err := d.p.Handle(ctx, order.Delivery{
		Message: order.Message{
			Data:        s.body(),
			Attributes:  map[string]string{order.EventTimeAttribute: s.EventTime.Format(time.RFC3339)},
			MessageID:   fmt.Sprintf("m-%d", d.n),
			PublishTime: s.At,
		},
		Subscription: "projects/p/subscriptions/pedidos-nuevos-push",
	}, s.At)
	return err
}

func (d *processorDriver) tick(ctx context.Context, now time.Time) error {
	res, err := d.p.Tick(ctx, now)
	d.ticks = append(d.ticks, res)
	return err
}

// TestSnapshotOnRealEngines reads what the real adapters wrote: panes
// appended by the stream processor to DuckDB's table, seen through the
// view; the watermark from the processor's embedded state store; records
// finished in the real ledger. No emulator needed.
func TestSnapshotOnRealEngines(t *testing.T) {
	ctx := context.Background()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	wh, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	p, err := stream.New(store, wh, []window.Spec{window.Defaults()}, contract.IsCountry, nil)
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.New(store, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := at("17:00")
	src := dashboard.Source{Warehouse: wh, Ledger: led, Watermarks: dashboard.StoreWatermarks{Store: store}, Now: func() time.Time { return clock }}

	empty := dashboard.Take(ctx, src)
	if diff := cmp.Diff(dashboard.Snapshot{Aggregation: "ventas_hora_pais", Now: clock, Bars: []dashboard.Bar{}, Files: []dashboard.File{}}, empty); diff != "" {
		t.Errorf("before anything (-want +got):\n%s", diff)
	}

	d := &processorDriver{p: p}
	if err := play(ctx, d, act1); err != nil {
		t.Fatal(err)
	}
	clock = at("17:25")
	if diff := cmp.Diff(wantAct1, dashboard.Take(ctx, src).Bars); diff != "" {
		t.Errorf("bars after act 1 (-want +got):\n%s", diff)
	}
	if err := play(ctx, d, act2); err != nil {
		t.Fatal(err)
	}
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/14/pedidos-erp.csv", Generation: 7}, at("18:21"),
		ledger.Done, ledger.Counts{Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "cantidad:below_min": 1, "fecha:invalid_date": 1}}, "")
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/15/vacio.csv", Generation: 8}, at("18:22"),
		ledger.Rejected, ledger.Counts{}, "empty file")

	clock = at("18:22")
	got := dashboard.Take(ctx, src)
	want := dashboard.Snapshot{
		Aggregation: "ventas_hora_pais", Now: clock, Watermark: &wantWatermark, Bars: wantAct2,
		Files: []dashboard.File{
			{Object: "gs://alpinashop-catalogo/exportaciones/2026/03/15/vacio.csv#8", State: ledger.Rejected, Feed: "lineas_pedido",
				Reason: "empty file", StartedAt: at("18:22"), FinishedAt: at("18:22").Add(time.Second)},
			{Object: "gs://alpinashop-catalogo/exportaciones/2026/03/14/pedidos-erp.csv#7", State: ledger.Done, Feed: "lineas_pedido",
				Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "cantidad:below_min": 1, "fecha:invalid_date": 1},
				StartedAt: at("18:21"), FinishedAt: at("18:21").Add(time.Second)},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot after act 2 (-want +got):\n%s", diff)
	}
	// The store reader must agree with what the processor itself reported.
	last := d.ticks[len(d.ticks)-1].Aggregations[0]
	if !got.Watermark.At.Equal(last.Watermark) || time.Duration(got.Watermark.LagSeconds)*time.Second != last.Lag {
		t.Errorf("dashboard watermark %+v, the tick reported W %s lag %s", got.Watermark, last.Watermark, last.Lag)
	}
}

func finish(t *testing.T, l *ledger.Ledger, key ledger.Key, now time.Time, state ledger.State, counts ledger.Counts, reason string) {
	t.Helper()
	ctx := context.Background()
	c, err := l.Claim(ctx, key, "md5-"+key.Object, "test", now)
	if err != nil || c.Decision != ledger.Proceed {
		t.Fatalf("claim %s: %v, %v", key, c.Decision, err)
	}
	rec := c.Record
	rec.State, rec.Feed, rec.Counts, rec.Reason = state, "lineas_pedido", counts, reason
	if err := l.Finish(ctx, rec, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestStoreWatermarksRefusesOddNames(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, name := range []string{"", "a/b", "../x"} {
		if _, err := (dashboard.StoreWatermarks{Store: store}).Watermark(context.Background(), name); err == nil {
			t.Errorf("Watermark(%q) succeeded; want an error (it would name another document)", name)
		}
	}
	w, err := (dashboard.StoreWatermarks{Store: store}).Watermark(context.Background(), "ventas_hora_pais")
	if err != nil || !w.IsZero() {
		t.Errorf("fresh store: W = %v, %v; want the zero time", w, err)
	}
}
