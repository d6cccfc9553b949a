package dashboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
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
	parts := ingesttest.NewParts(t)
	store, wh, led := parts.Store, parts.Warehouse, parts.Ledger
	p, err := stream.New(store, wh, []window.Spec{window.Defaults()}, contract.IsCountry, nil)
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
		Discards: noDiscards(clock), OpenWindows: &dashboard.OpenWindows{Latest: []dashboard.OpenWindow{}, Failing: []dashboard.FailingWindow{}},
	}, empty); diff != "" {
		t.Errorf("before anything (-want +got):\n%s", diff)
	}
	for _, name := range []string{"", "a/b", "../x"} {
		if _, err := (dashboard.StoreWatermarks{Store: store}).Watermark(ctx, name); err == nil {
			t.Errorf("Watermark(%q) succeeded; want an error (it would name another document)", name)
		}
	}

	d := &processorDriver{p: p}
	check(t, play(ctx, d, act1))
	clock = at("17:25")
	if diff := cmp.Diff(wantAct1, dashboard.TakeFiltered(ctx, src, dashboard.Filter{}).Bars); diff != "" {
		t.Errorf("bars after act 1 (-want +got):\n%s", diff)
	}
	check(t, play(ctx, d, act2))
	// A message that is no order (a dead letter) and an order of 15:10,
	// whose window closed for good at 16:00 + L = 18:00 <= W (too late).
	if _, err := p.Handle(ctx, order.Delivery{
		Message:      order.Message{Data: []byte("not json"), MessageID: "m-bad", PublishTime: at("18:21")},
		Subscription: "projects/p/subscriptions/pedidos-nuevos-push",
	}, at("18:21")); err != nil {
		t.Fatal(err)
	}
	check(t, play(ctx, d, []step{pedido("18:21", "P-6", "ES", "5.00", "5.00", 1, "15:10"), tick("18:22")}))
	const quarantine = "cuarentena/lineas_pedido/2026/03/14/pedidos-erp.csv.7.rechazos.csv"
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/14/pedidos-erp.csv", Generation: 7}, at("18:21"),
		ledger.Done, ledger.Counts{Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "cantidad:below_min": 1, "fecha:invalid_date": 1}}, "", quarantine)
	finish(t, led, ledger.Key{Bucket: "alpinashop-catalogo", Object: "exportaciones/2026/03/15/vacio.csv", Generation: 8}, at("18:22"),
		ledger.Rejected, ledger.Counts{}, "empty file", "")

	clock = at("18:22")
	got := dashboard.TakeFiltered(ctx, src, dashboard.Filter{})
	lastAccepted := at("18:21")
	want := dashboard.Snapshot{
		Aggregation: "ventas_hora_pais", Now: clock, Watermark: &wantWatermark, Bars: wantAct2,
		Key: "pais", Window: hourly, Keys: []string{"ES", "PT", "FR"},
		// Once an order was accepted: the 24 h up to the end of the newest window.
		Range: dashboard.Range{From: at("19:00").Add(-24 * time.Hour), Until: ptr(at("19:00")),
			LastHours: 24, Newest: true},
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
		}, Failing: []dashboard.FailingWindow{}},
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
			// The discards are those of the last 24 hours: dead letters, too late.
			type result struct {
				Errors    map[string]string
				Bars      []dashboard.Bar
				Countries []string
				Discards  [2]int64
			}
			want := result{Bars: tt.want, Countries: tt.countries, Discards: tt.discards}
			if diff := cmp.Diff(want, result{Errors: got.Errors, Bars: got.Bars, Countries: got.Countries,
				Discards: [2]int64{got.Discards.DeadLetters, got.Discards.TooLate}}); diff != "" {
				t.Errorf("filtered snapshot (-want +got):\n%s", diff)
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
	check(t, l.Finish(ctx, rec, now.Add(time.Second)))
}

// step is one moment of the story both the engine test and the browser test
// play: at processing time At, either an order arrives or the timer ticks.
type step struct {
	At        time.Time
	Tick      bool
	PedidoID  string
	Pais      string
	Importe   string // importe_total; one line of Cantidad units at Importe/Cantidad
	Precio    string
	Cantidad  int64
	EventTime time.Time
}

func (s step) body() []byte {
	return fmt.Appendf(nil, `{"pedido_id":%q,"cliente_id":"C-1","pais":%q,"importe_total":%q,"lineas":[{"sku":"MOCH-40L-AZ","cantidad":%d,"precio_unitario":%q}]}`,
		s.PedidoID, s.Pais, s.Importe, s.Cantidad, s.Precio)
}

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-03-14 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func pedido(arrival, id, pais, importe, precio string, cantidad int64, event string) step {
	return step{At: at(arrival), PedidoID: id, Pais: pais, Importe: importe, Precio: precio, Cantidad: cantidad, EventTime: at(event)}
}

func tick(hhmm string) step { return step{At: at(hhmm), Tick: true} }

// The story, with the defaults (1 h windows, D = 10 min, I = 5 min,
// E = 60 s, L = 2 h, Ld = 0), in two acts so the browser test can watch the
// page change by itself between them.
//
// Act 1: two orders in the 17:00 window; at 17:25 the source has been idle
// for 25 min, so W = 17:25 - D = 17:15 < 18:00 and both get an EARLY pane.
var act1 = []step{
	pedido("17:00", "P-1", "ES", "100.10", "50.05", 2, "17:10"),
	pedido("17:00", "P-2", "PT", "50.05", "50.05", 1, "17:20"),
	tick("17:25"),
}

// Act 2: orders at 18:05 and 18:10 arrive at 18:20, so the tick sets
// W = 18:10 - D = 18:00 and closes the 17:00 window: ON_TIME panes. A PT
// order of 17:40 arriving at 18:21 is late but within L: with Ld = 0 its
// LATE correction is written at once (PT 17:00 = 60.05). At 18:22 the new
// window's first change is 2 min old: EARLY panes for FR and ES. W stays
// 18:00 (M = 18:10), so the lag at 18:22 is 22 min.
var act2 = []step{
	pedido("18:20", "P-3", "FR", "20.00", "20.00", 1, "18:05"),
	pedido("18:20", "P-4", "ES", "30.00", "10.00", 3, "18:10"),
	tick("18:20"),
	pedido("18:21", "P-5", "PT", "10.00", "10.00", 1, "17:40"),
	tick("18:22"),
}

func mustDec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

func wantBar(start, pais, importe string, pedidos, unidades int64, timing string, pane int64) dashboard.Bar {
	return dashboard.Bar{WindowStart: at(start), WindowEnd: at(start).Add(time.Hour), Pais: pais, Importe: mustDec(importe),
		Pedidos: pedidos, Unidades: unidades, Timing: timing, PaneIndex: pane}
}

// wantAct1 and wantAct2 are the view after each act, in the page's order
// (window, then country).
var (
	wantAct1 = []dashboard.Bar{
		wantBar("17:00", "ES", "100.1", 1, 2, "EARLY", 0),
		wantBar("17:00", "PT", "50.05", 1, 1, "EARLY", 0),
	}
	wantAct2 = []dashboard.Bar{
		wantBar("17:00", "ES", "100.1", 1, 2, "ON_TIME", 1),
		wantBar("17:00", "PT", "60.05", 2, 2, "LATE", 2),
		wantBar("18:00", "ES", "30", 1, 3, "EARLY", 0),
		wantBar("18:00", "FR", "20", 1, 1, "EARLY", 0),
	}
	wantWatermark = dashboard.Watermark{At: at("18:00"), LagSeconds: 22 * 60}
)

// driver plays steps against some deployment of the pipeline.
type driver interface {
	order(ctx context.Context, s step) error
	tick(ctx context.Context, now time.Time) error
}

func play(ctx context.Context, d driver, steps []step) error {
	for _, s := range steps {
		var err error
		if s.Tick {
			err = d.tick(ctx, s.At)
		} else {
			err = d.order(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("step at %s: %w", s.At.Format("15:04"), err)
		}
	}
	return nil
}

// check fails the test at once on an error of the story's plumbing.
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
