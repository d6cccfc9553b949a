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
	src := dashboard.Source{
		Warehouse: wh, Ledger: led, Watermarks: dashboard.StoreWatermarks{Store: store}, Stream: p,
		Now: func() time.Time { return clock }, QuarantineBucket: "alpinashop-cuarentena",
	}

	empty := dashboard.TakeFiltered(ctx, src, dashboard.Filter{})
	if diff := cmp.Diff(dashboard.Snapshot{
		Aggregation: "ventas_hora_pais", Now: clock, Range: lastDay(clock), Bars: []dashboard.Bar{}, Files: []dashboard.File{}, Countries: []string{},
		Key: "pais", Window: hourly, Keys: []string{},
		Discards: noDiscards(clock), OpenWindows: &dashboard.OpenWindows{Latest: []dashboard.OpenWindow{}, Failing: []dashboard.FailingCell{}},
	}, empty); diff != "" {
		t.Errorf("before anything (-want +got):\n%s", diff)
	}

	d := &processorDriver{p: p}
	if err := play(ctx, d, act1); err != nil {
		t.Fatal(err)
	}
	clock = at("17:25")
	if diff := cmp.Diff(wantAct1, dashboard.TakeFiltered(ctx, src, dashboard.Filter{}).Bars); diff != "" {
		t.Errorf("bars after act 1 (-want +got):\n%s", diff)
	}
	if err := play(ctx, d, act2); err != nil {
		t.Fatal(err)
	}
	// A message that is no order (a dead letter) and an order of 15:10,
	// whose window closed for good at 16:00 + L = 18:00 <= W (too late).
	if _, err := p.Handle(ctx, order.Delivery{
		Message:      order.Message{Data: []byte("not json"), MessageID: "m-bad", PublishTime: at("18:21")},
		Subscription: "projects/p/subscriptions/pedidos-nuevos-push",
	}, at("18:21")); err != nil {
		t.Fatal(err)
	}
	if err := play(ctx, d, []step{pedido("18:21", "P-6", "ES", "5.00", "5.00", 1, "15:10"), tick("18:22")}); err != nil {
		t.Fatal(err)
	}
	const quarantine = "cuarentena/lineas_pedido/2026/03/14/pedidos-erp.csv.7.rechazos.csv"
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/14/pedidos-erp.csv", Generation: 7}, at("18:21"),
		ledger.Done, ledger.Counts{Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "cantidad:below_min": 1, "fecha:invalid_date": 1}}, "", quarantine)
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/15/vacio.csv", Generation: 8}, at("18:22"),
		ledger.Rejected, ledger.Counts{}, "empty file", "")

	clock = at("18:22")
	got := dashboard.TakeFiltered(ctx, src, dashboard.Filter{})
	lastAccepted := at("18:21")
	want := dashboard.Snapshot{
		Aggregation: "ventas_hora_pais", Now: clock, Range: upTo(at("19:00")), Watermark: &wantWatermark, Bars: wantAct2,
		Key: "pais", Window: hourly, Keys: []string{"ES", "PT", "FR"},
		Freshness: dashboard.Freshness{
			LastOrderAccepted: &lastAccepted,
			LastFileLoaded: &dashboard.LoadedFile{Bucket: "alpinashop-catalogo", Name: "exportaciones/2026/03/14/pedidos-erp.csv",
				Generation: 7, FinishedAt: at("18:21").Add(time.Second)},
		},
		Countries: []string{"ES", "FR", "PT"},
		Discards: dashboard.Discards{
			Since: clock.Add(-24 * time.Hour), DeadLetters: 1, TooLate: 1,
			LatestDeadLetters: []dashboard.Discard{{Reason: "invalid: missing attribute momento_evento", ReceivedAt: at("18:21")}},
			LatestTooLate:     []dashboard.Discard{{PedidoID: "P-6", Reason: "too_late", EventTime: at("15:10"), WindowStart: at("15:00"), ReceivedAt: at("18:21")}},
		},
		OpenWindows: &dashboard.OpenWindows{Cells: 4, Windows: 2, Latest: []dashboard.OpenWindow{
			{WindowStart: at("18:00"), WindowEnd: at("19:00"), Pais: "FR", Panes: 1, OnTime: "PENDING"},
			{WindowStart: at("18:00"), WindowEnd: at("19:00"), Pais: "ES", Panes: 1, OnTime: "PENDING"},
			{WindowStart: at("17:00"), WindowEnd: at("18:00"), Pais: "PT", Panes: 3, OnTime: "DONE"},
			{WindowStart: at("17:00"), WindowEnd: at("18:00"), Pais: "ES", Panes: 2, OnTime: "DONE"},
		}, Failing: []dashboard.FailingCell{}},
		Files: []dashboard.File{
			{Object: "gs://alpinashop-catalogo/exportaciones/2026/03/15/vacio.csv#8", Bucket: "alpinashop-catalogo",
				Name: "exportaciones/2026/03/15/vacio.csv", Generation: 8, State: ledger.Rejected, Feed: "lineas_pedido",
				Reason: "empty file", StartedAt: at("18:22"), FinishedAt: at("18:22").Add(time.Second)},
			{Object: "gs://alpinashop-catalogo/exportaciones/2026/03/14/pedidos-erp.csv#7", Bucket: "alpinashop-catalogo",
				Name: "exportaciones/2026/03/14/pedidos-erp.csv", Generation: 7, State: ledger.Done, Feed: "lineas_pedido",
				Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "cantidad:below_min": 1, "fecha:invalid_date": 1},
				StartedAt: at("18:21"), FinishedAt: at("18:21").Add(time.Second), Quarantine: quarantine,
				QuarantineURL: "download/storage/v1/b/alpinashop-cuarentena/o/cuarentena%2Flineas_pedido%2F2026%2F03%2F14%2Fpedidos-erp.csv.7.rechazos.csv?alt=media"},
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

	// The filters run on DuckDB as they would on BigQuery: one country,
	// one day, and a day with no window; without a from, the windows of
	// the 24 hours up to the newest window, and the discards received in
	// the last 24 hours of processing time. The country choices ignore the country filter but not the
	// range (the choices of the days shown).
	all := []string{"ES", "FR", "PT"}
	filtered := []struct {
		name      string
		now       time.Time
		filter    dashboard.Filter
		want      []dashboard.Bar
		countries []string
		discards  [2]int64 // dead letters, too late
	}{
		{name: "ES only", filter: dashboard.Filter{Paises: []string{"ES"}}, want: []dashboard.Bar{wantAct2[0], wantAct2[2]}, countries: all, discards: [2]int64{1, 1}},
		{name: "FR and PT on 14 March", filter: dashboard.Filter{Paises: []string{"FR", "PT"}, From: day(14), To: day(14)}, want: []dashboard.Bar{wantAct2[1], wantAct2[3]},
			countries: all, discards: [2]int64{1, 1}},
		{name: "13 March", filter: dashboard.Filter{From: day(13), To: day(13)}, want: []dashboard.Bar{}, countries: []string{}, discards: [2]int64{1, 1}},
		{name: "from 15 March", filter: dashboard.Filter{From: day(15)}, want: []dashboard.Bar{}, countries: []string{}, discards: [2]int64{1, 1}},
		{name: "up to 14 March", filter: dashboard.Filter{To: day(14)}, want: wantAct2, countries: all, discards: [2]int64{1, 1}},
		// The default view follows the data, not processing time: the 24 h
		// up to the end of the newest window, however late it is now; the
		// discards stay those received in the last 24 h.
		{name: "a day later the default view still shows the newest data", now: at("18:22").Add(24 * time.Hour), want: wantAct2, countries: all},
		{name: "262 days later too", now: at("18:22").AddDate(0, 0, 262), want: wantAct2, countries: all},
		{name: "a day later an explicit day still shows", now: at("18:22").Add(24 * time.Hour), filter: dashboard.Filter{From: day(14), To: day(14)},
			want: wantAct2, countries: all},
	}
	for _, tt := range filtered {
		t.Run(tt.name, func(t *testing.T) {
			src := src
			if !tt.now.IsZero() {
				src.Now = func() time.Time { return tt.now }
			}
			got := dashboard.TakeFiltered(ctx, src, tt.filter)
			if got.Errors != nil {
				t.Fatalf("errors: %v", got.Errors)
			}
			if diff := cmp.Diff(tt.want, got.Bars); diff != "" {
				t.Errorf("bars (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.countries, got.Countries); diff != "" {
				t.Errorf("countries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.discards, [2]int64{got.Discards.DeadLetters, got.Discards.TooLate}); diff != "" {
				t.Errorf("discards of the last 24 hours, dead letters and too late (-want +got):\n%s", diff)
			}
		})
	}
}

// noDiscards is the summary of no discard at processing time now: the
// counts are of the last 24 hours.
func noDiscards(now time.Time) dashboard.Discards {
	return dashboard.Discards{Since: now.Add(-24 * time.Hour), LatestDeadLetters: []dashboard.Discard{}, LatestTooLate: []dashboard.Discard{}}
}

// hourly is the window ventas_hora_pais declares.
var hourly = dashboard.WindowDecl{Kind: "fixed", SizeSeconds: 3600, PeriodSeconds: 3600}

// upTo is the default view's range once an order was accepted: the 24 h up
// to the end of the newest window.
func upTo(end time.Time) dashboard.Range {
	return dashboard.Range{From: end.Add(-24 * time.Hour), Until: &end, LastHours: 24, Newest: true}
}

// lastDay is the default view's range at processing time now, before any
// order was accepted.
func lastDay(now time.Time) dashboard.Range {
	return dashboard.Range{From: now.Add(-24 * time.Hour), LastHours: 24}
}

func day(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

func finish(t *testing.T, l *ledger.Ledger, key ledger.Key, now time.Time, state ledger.State, counts ledger.Counts, reason, quarantine string) {
	t.Helper()
	ctx := context.Background()
	c, err := l.Claim(ctx, key, "md5-"+key.Object, "test", now)
	if err != nil || c.Decision != ledger.Proceed {
		t.Fatalf("claim %s: %v, %v", key, c.Decision, err)
	}
	rec := c.Record
	rec.State, rec.Feed, rec.Counts, rec.Reason, rec.Quarantine = state, "lineas_pedido", counts, reason, quarantine
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
