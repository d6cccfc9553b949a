package warehousetest

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// readTests are the tests of the named reads, by name; runReads fails a
// read without one.
var readTests = map[string]func(t *testing.T, w Warehouse, mode string){
	"newest_windows":               testNewestWindows,
	"windows_between":              testWindowsBetween,
	"discard_summary":              testDiscardSummary,
	"discard_counts":               testDiscardCounts,
	"discard_reasons":              testDiscardReasons,
	"line_dates":                   testLineDates,
	"day_orders":                   testDayOrders,
	"country_totals":               testCountryTotals,
	"day_drops":                    testDayDrops,
	warehouse.ListLineasPedido:     testListings,
	warehouse.ListOpiniones:        testListings,
	warehouse.ListVentasDiariasSKU: testListings,
	warehouse.ListPanes:            testListings,
	warehouse.ListView:             testListings,
	warehouse.ListDiscards:         testListings,
}

// listings are the reads testListings checks together, as Read/listings.
var listings = []string{warehouse.ListLineasPedido, warehouse.ListOpiniones, warehouse.ListVentasDiariasSKU,
	warehouse.ListPanes, warehouse.ListView, warehouse.ListDiscards}

var decEqual = cmp.Comparer(func(a, b numeric.Dec) bool { return a.Equal(b) })

func diff[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	if d := cmp.Diff(want, got, decEqual); d != "" {
		t.Errorf("%s: (-want +got)\n%s", what, d)
	}
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// tagDay is a date of lineas_pedido that only tag uses.
func tagDay(tag string) int32 {
	h := fnv.New32a()
	h.Write([]byte(tag))
	return warehouse.DateOf(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) + int32(h.Sum32()%20000)
}

// seedWindows appends the panes of aggregation tag: windows 10:00 to 13:00
// of 2026-03-14 for ES, FR and PT, ES at 12:00 in two panes (in both
// modes 25.5, 3, 5, ON_TIME, pane 1), and one of another aggregation.
func seedWindows(t *testing.T, w Warehouse, tag, mode string) (w10, w11, w12, w13 time.Time) {
	t.Helper()
	const h10, h11, h12, h13 = "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z", "2026-03-14T12:00:00Z", "2026-03-14T13:00:00Z"
	second := pane(t, tag, mode, h12, "ES", 1, "ON_TIME", "25.5", 3, 5)
	if mode == warehouse.Discarding {
		second = pane(t, tag, mode, h12, "ES", 1, "ON_TIME", "15.5", 2, 3)
	}
	rows := []warehouse.Row{
		pane(t, tag, mode, h10, "ES", 0, "ON_TIME", "1.1", 1, 1),
		pane(t, tag, mode, h10, "FR", 0, "ON_TIME", "2.2", 1, 2),
		pane(t, tag, mode, h11, "FR", 0, "LATE", "3.3", 1, 3),
		pane(t, tag, mode, h12, "ES", 0, "EARLY", "10", 1, 2),
		second,
		pane(t, tag, mode, h12, "PT", 0, "ON_TIME", "99999999999999999999.999999999", 7, 7),
		pane(t, tag, mode, h13, "FR", 0, "EARLY", "0.1", 1, 1),
		pane(t, tag+"x", mode, h13, "ES", 0, "EARLY", "5", 1, 1),
	}
	add(t, w, warehouse.VentasHoraPaisPaneles, rows...)
	return ts(t, h10), ts(t, h11), ts(t, h12), ts(t, h13)
}

func sale(t *testing.T, start time.Time, pais, importe string, pedidos, unidades int64, timing string, index int64) warehouse.HourlySale {
	return warehouse.HourlySale{WindowStart: start, WindowEnd: start.Add(time.Hour), Pais: pais, Importe: dec(t, importe),
		Pedidos: pedidos, Unidades: unidades, Timing: timing, PaneIndex: index}
}

func testNewestWindows(t *testing.T, w Warehouse, mode string) {
	ctx := context.Background()
	tag := newTag(t)
	w10, w11, w12, w13 := seedWindows(t, w, tag, mode)
	es12 := sale(t, w12, "ES", "25.5", 3, 5, "ON_TIME", 1)
	pt12 := sale(t, w12, "PT", "99999999999999999999.999999999", 7, 7, "ON_TIME", 0)
	fr10, fr11, fr13 := sale(t, w10, "FR", "2.2", 1, 2, "ON_TIME", 0), sale(t, w11, "FR", "3.3", 1, 3, "LATE", 0), sale(t, w13, "FR", "0.1", 1, 1, "EARLY", 0)
	tests := []struct {
		name string
		q    warehouse.NewestWindows
		want []warehouse.HourlySale
	}{
		{name: "the newest two windows", q: warehouse.NewestWindows{Aggregation: tag, Windows: 2},
			want: []warehouse.HourlySale{es12, pt12, fr13}},
		{name: "the newest two windows holding FR", q: warehouse.NewestWindows{Aggregation: tag, Windows: 2, Keys: []string{"FR"}},
			want: []warehouse.HourlySale{fr11, fr13}},
		{name: "a range, ES and FR", q: warehouse.NewestWindows{Aggregation: tag, Windows: 24, From: w10, Until: w13, Keys: []string{"ES", "FR"}},
			want: []warehouse.HourlySale{sale(t, w10, "ES", "1.1", 1, 1, "ON_TIME", 0), fr10, fr11, es12}},
		{name: "no window", q: warehouse.NewestWindows{Aggregation: tag, Windows: 0}, want: []warehouse.HourlySale{}},
		{name: "another aggregation", q: warehouse.NewestWindows{Aggregation: tag + "y", Windows: 24}, want: []warehouse.HourlySale{}},
	}
	for _, tc := range tests {
		got := must[[]warehouse.HourlySale](t, tc.name)(warehouse.ReadNewestWindows(ctx, w, tc.q))
		diffSales(t, w, mode, viewOf(t, warehouse.VentasHoraPais), tag, tc.name, tc.want, got)
	}
}

func testWindowsBetween(t *testing.T, w Warehouse, mode string) {
	tag := newTag(t)
	_, w11, w12, w13 := seedWindows(t, w, tag, mode)
	got := must[[]warehouse.HourlySale](t, "windows_between")(warehouse.ReadWindowsBetween(context.Background(), w, tag, w11, w13))
	diffSales(t, w, mode, viewOf(t, warehouse.VentasHoraPais), tag, "windows 11:00 to 13:00", []warehouse.HourlySale{
		sale(t, w11, "FR", "3.3", 1, 3, "LATE", 0),
		sale(t, w12, "ES", "25.5", 3, 5, "ON_TIME", 1),
		sale(t, w12, "PT", "99999999999999999999.999999999", 7, 7, "ON_TIME", 0),
	}, got)
}

// drop is one pedidos_descartados row; zero times and "" are NULL.
type drop struct {
	id, pedido, aggregation, reason string
	event, window, received         time.Time
}

func (d drop) row(t *testing.T) warehouse.Row {
	str := func(s string) warehouse.Value {
		if s == "" {
			return warehouse.NullValue()
		}
		return warehouse.StringValue(s)
	}
	tm := func(v time.Time) warehouse.Value {
		if v.IsZero() {
			return warehouse.NullValue()
		}
		return warehouse.TimeValue(v)
	}
	return warehouse.Row{ID: d.id, Values: rowOf(t, warehouse.PedidosDescartados, map[string]warehouse.Value{
		"pedido_id": str(d.pedido), "aggregation": str(d.aggregation), "reason": str(d.reason),
		"event_time": tm(d.event), "window_start": tm(d.window), "watermark": warehouse.NullValue(),
		"received_at": tm(d.received), "message_id": str(d.id), "raw": str("{}"),
	})}
}

func appendDrops(t *testing.T, w Warehouse, ds ...drop) {
	t.Helper()
	rows := make([]warehouse.Row, len(ds))
	for i, d := range ds {
		rows[i] = d.row(t)
	}
	add(t, w, warehouse.PedidosDescartados, rows...)
}

func (d drop) discard() warehouse.Discard {
	return warehouse.Discard{PedidoID: d.pedido, Reason: d.reason, EventTime: d.event, WindowStart: d.window, ReceivedAt: d.received}
}

// future is after the rows the tests write at fixed dates.
var future = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

// A test that reads "the newest discards" must see only its own, and dead
// letters have no aggregation to tag, so it writes in a span newestSpan
// hands out: after 2100-01-01 by the wall-clock time since 2026, so a
// later run writes later, each span after the previous one. Times stay
// below BigQuery's last partition date until 2085.
var (
	spanEpoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	clockRef  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	spanMu   sync.Mutex
	spanNext time.Time
)

const spanWidth = 200 * time.Millisecond

func newestSpan() time.Time {
	spanMu.Lock()
	defer spanMu.Unlock()
	at := spanEpoch.Add(time.Since(clockRef)).Truncate(time.Millisecond)
	if at.Before(spanNext) {
		at = spanNext
	}
	spanNext = at.Add(spanWidth)
	return at
}

func testDiscardSummary(t *testing.T, w Warehouse, mode string) {
	ctx := context.Background()
	tag := newTag(t)
	read := func(since, from, until time.Time) warehouse.DiscardSummary {
		q := warehouse.DiscardSummaryQuery{Aggregation: tag, Latest: 2, Since: since, From: from, Until: until}
		return must[warehouse.DiscardSummary](t, "discard_summary")(warehouse.ReadDiscardSummary(ctx, w, q))
	}
	span := newestSpan()
	since, zero := span.Add(2*time.Millisecond), time.Time{}
	before, beforeBounded := read(zero, zero, zero), read(since, zero, zero)
	at := func(ms int) time.Time { return span.Add(time.Duration(ms)*time.Millisecond + 500*time.Microsecond) }
	ev := ts(t, "2026-03-14T10:20:00Z")
	d1 := drop{id: tag + "-1", reason: "invalid: " + tag + " not JSON", received: at(1)}
	d2 := drop{id: tag + "-2", pedido: tag + "-p2", reason: "invalid: " + tag + " no pais", event: ev, received: at(2)}
	d3 := drop{id: tag + "-3", pedido: tag + "-p3", reason: "invalid: " + tag + " no pais", event: ev, received: at(3)}
	l1 := drop{id: tag + "-4", pedido: tag + "-p4", aggregation: tag, reason: warehouse.ReasonTooLate, event: ev, window: ev.Truncate(time.Hour), received: at(1)}
	l2 := drop{id: tag + "-5", pedido: tag + "-p5", aggregation: tag, reason: warehouse.ReasonTooLate, event: ev, window: ev.Truncate(time.Hour), received: at(2)}
	other := drop{id: tag + "-6", pedido: tag + "-p6", aggregation: tag + "x", reason: warehouse.ReasonTooLate, event: ev, window: ev.Truncate(time.Hour), received: at(9)}
	appendDrops(t, w, d1, d2, d3, l1, l2, other)
	_, _, w12, w13 := seedWindows(t, w, tag, mode)
	got := read(zero, zero, zero)
	diff(t, "counts", [2]int64{before.DeadLetters + 3, before.TooLate + 2}, [2]int64{got.DeadLetters, got.TooLate})
	got.DeadLetters, got.TooLate = 0, 0
	diff(t, "summary", warehouse.DiscardSummary{
		LatestDeadLetters: []warehouse.Discard{d3.discard(), d2.discard()},
		LatestTooLate:     []warehouse.Discard{l2.discard(), l1.discard()},
		Countries:         []string{"ES", "FR", "PT"},
	}, got)
	// Received since 2 ms past: d2, d3 and l2, not d1 and l1; the
	// countries of the 12:00 window alone.
	got = read(since, w12, w13)
	diff(t, "bounded counts", [2]int64{beforeBounded.DeadLetters + 2, beforeBounded.TooLate + 1}, [2]int64{got.DeadLetters, got.TooLate})
	got.DeadLetters, got.TooLate = 0, 0
	diff(t, "bounded summary", warehouse.DiscardSummary{
		LatestDeadLetters: []warehouse.Discard{d3.discard(), d2.discard()},
		LatestTooLate:     []warehouse.Discard{l2.discard()},
		Countries:         []string{"ES", "PT"},
	}, got)
}

func testDiscardCounts(t *testing.T, w Warehouse, _ string) {
	ctx := context.Background()
	tag := newTag(t)
	since := future.Add(time.Hour)
	read := func() warehouse.DiscardCounts {
		return must[warehouse.DiscardCounts](t, "discard_counts")(warehouse.ReadDiscardCounts(ctx, w, since))
	}
	before := read()
	appendDrops(t, w,
		drop{id: tag + "-1", reason: "invalid: " + tag, received: since.Add(-time.Microsecond)},
		drop{id: tag + "-2", reason: "invalid: " + tag, received: since},
		drop{id: tag + "-3", aggregation: tag, reason: warehouse.ReasonTooLate, received: since.Add(time.Minute)},
	)
	got := read()
	diff(t, "counts", warehouse.DiscardCounts{
		InvalidTotal: before.InvalidTotal + 2, Invalid: before.Invalid + 1,
		TooLateTotal: before.TooLateTotal + 1, TooLate: before.TooLate + 1,
	}, got)
}

func testDiscardReasons(t *testing.T, w Warehouse, _ string) {
	tag := newTag(t)
	since := newestSpan().Add(100 * time.Millisecond)
	var ds []drop
	for i, reason := range []string{"invalid: " + tag + " b", "invalid: " + tag + " a", "invalid: " + tag + " b", warehouse.ReasonTooLate, "invalid: " + tag + " c", "invalid: " + tag + " old"} {
		at := since.Add(time.Duration(i) * time.Millisecond)
		if reason == "invalid: "+tag+" old" {
			at = since.Add(-time.Millisecond)
		}
		ds = append(ds, drop{id: tag + "-" + string(rune('a'+i)), reason: reason, received: at})
	}
	appendDrops(t, w, ds...)
	got := must[[]warehouse.ReasonCount](t, "discard_reasons")(warehouse.ReadDiscardReasons(context.Background(), w, since, 3))
	diff(t, "reasons", []warehouse.ReasonCount{
		{Reason: "invalid: " + tag + " b", Count: 2},
		{Reason: "invalid: " + tag + " a", Count: 1},
		{Reason: "invalid: " + tag + " c", Count: 1},
	}, got)
}

// seedLines loads the lines of tagDay(tag): an object in two generations,
// an order in two countries, a NULL customer, money a float would round.
func seedLines(t *testing.T, w Warehouse, tag string) (d int32, fecha string) {
	t.Helper()
	d = tagDay(tag)
	fecha = warehouse.FormatDate(d)
	next := warehouse.FormatDate(d + 2)
	a, b := tag+"/a.csv", tag+"/b.csv"
	load(t, w, tag+"-a1",
		line{tag + "-p1", 1, fecha, tag + "-s1", 9, "9.99", "c1", "ES", a, 1, 2},
		line{tag + "-p9", 1, next, tag + "-s1", 1, "1", "c9", "ES", a, 1, 3})
	load(t, w, tag+"-a2",
		line{tag + "-p1", 1, fecha, tag + "-s1", 1, "0.1", "c1", "ES", a, 2, 2},
		line{tag + "-p1", 2, fecha, tag + "-s2", 2, "0.1", "c1", "ES", a, 2, 3},
		line{tag + "-p2", 1, fecha, tag + "-s1", 1, "0.2", "", "FR", a, 2, 4})
	load(t, w, tag+"-b1",
		line{tag + "-p3", 1, fecha, tag + "-s3", 3, "33.333333333", "c3", "PT", b, 7, 2},
		line{tag + "-p3", 2, fecha, tag + "-s3", 1, "0.000000001", "c3", "ES", b, 7, 3})
	return d, fecha
}

func testLineDates(t *testing.T, w Warehouse, _ string) {
	tag := newTag(t)
	d, _ := seedLines(t, w, tag)
	ctx := context.Background()
	got := must[[]int32](t, "line_dates")(warehouse.ReadLineDates(ctx, w, d-1, d+5))
	diff(t, "dates around the tag's", []int32{d, d + 2}, got)
	got = must[[]int32](t, "line_dates")(warehouse.ReadLineDates(ctx, w, d+1, d+2))
	diff(t, "bounds included", []int32{d + 2}, got)
	all := must[[]int32](t, "line_dates")(warehouse.ReadLineDates(ctx, w, warehouse.FirstDate, warehouse.LastDate))
	for _, want := range []int32{d, d + 2} {
		if !slices.Contains(all, want) {
			t.Errorf("every date: %v lacks %s", all, warehouse.FormatDate(want))
		}
	}
}

func testDayOrders(t *testing.T, w Warehouse, _ string) {
	tag := newTag(t)
	d, _ := seedLines(t, w, tag)
	got := must[[]warehouse.DayOrder](t, "day_orders")(warehouse.ReadDayOrders(context.Background(), w, d))
	diff(t, "orders", []warehouse.DayOrder{
		{PedidoID: tag + "-p1", Pais: "ES", PaisMax: "ES", ClienteID: "c1", Importe: dec(t, "0.3"), Unidades: 3},
		{PedidoID: tag + "-p2", Pais: "FR", PaisMax: "FR", Importe: dec(t, "0.2"), Unidades: 1},
		{PedidoID: tag + "-p3", Pais: "ES", PaisMax: "PT", ClienteID: "c3", Importe: dec(t, "100.000000000"), Unidades: 4},
	}, got)
}

func testCountryTotals(t *testing.T, w Warehouse, _ string) {
	tag := newTag(t)
	d, _ := seedLines(t, w, tag)
	got := must[[]warehouse.CountryTotal](t, "country_totals")(warehouse.ReadCountryTotals(context.Background(), w, d))
	diff(t, "totals", []warehouse.CountryTotal{
		{Pais: "ES", Importe: dec(t, "0.300000001"), Pedidos: 2, Unidades: 4},
		{Pais: "FR", Importe: dec(t, "0.2"), Pedidos: 1, Unidades: 1},
		{Pais: "PT", Importe: dec(t, "99.999999999"), Pedidos: 1, Unidades: 3},
	}, got)
}

func testDayDrops(t *testing.T, w Warehouse, _ string) {
	tag := newTag(t)
	d, _ := seedLines(t, w, tag)
	from := warehouse.DayTime(d)
	until := from.Add(24 * time.Hour)
	in, out := from.Add(3*time.Hour), until.Add(time.Hour)
	late := drop{id: tag + "-1", pedido: tag + "-p3", aggregation: tag, reason: warehouse.ReasonTooLate, event: out, window: out.Truncate(time.Hour), received: out}
	bad := drop{id: tag + "-2", pedido: tag + "-q1", reason: "invalid: " + tag + " bad pais", event: in, received: out}
	noTime := drop{id: tag + "-3", reason: "invalid: " + tag + " not JSON", received: in}
	appendDrops(t, w, late, bad, noTime,
		drop{id: tag + "-4", pedido: tag + "-p1", aggregation: tag + "x", reason: warehouse.ReasonTooLate, event: in, window: in, received: in},
		drop{id: tag + "-5", pedido: tag + "-q2", aggregation: tag, reason: warehouse.ReasonTooLate, event: out, window: out, received: out},
		drop{id: tag + "-6", reason: "invalid: " + tag + " later", received: out},
	)
	got := must[[]warehouse.DayDrop](t, "day_drops")(warehouse.ReadDayDrops(context.Background(), w, d, tag, from, until))
	diff(t, "drops", []warehouse.DayDrop{
		{Discard: noTime.discard()},
		{Discard: late.discard(), Matched: true, Pais: "ES", Importe: dec(t, "0.000000001"), Unidades: 1},
		{Discard: late.discard(), Matched: true, Pais: "PT", Importe: dec(t, "99.999999999"), Unidades: 3},
		{Discard: bad.discard()},
	}, sortDrops(got))
}

// sortDrops orders the rows of one pedido_id, reason and arrival by country,
// which the read leaves in either order.
func sortDrops(ds []warehouse.DayDrop) []warehouse.DayDrop {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j].PedidoID == ds[j-1].PedidoID && ds[j].Reason == ds[j-1].Reason &&
			ds[j].ReceivedAt.Equal(ds[j-1].ReceivedAt) && ds[j].Pais < ds[j-1].Pais; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
	return ds
}

func runReads(t *testing.T, open func(t *testing.T) Warehouse, mode string) {
	listed := false
	for _, q := range warehouse.NamedQueries() {
		name := q.Name
		if slices.Contains(listings, name) {
			if listed {
				continue
			}
			listed, name = true, "listings"
		}
		test, ok := readTests[q.Name]
		if v := q.View; v != nil {
			switch base, _, perView := strings.Cut(q.Name, ":"); {
			case base == "panes":
				test, ok = func(t *testing.T, w Warehouse, mode string) { testPanesOf(t, w, mode, *v) }, true
			case perView && base == "newest_windows":
				test, ok = func(t *testing.T, w Warehouse, mode string) { testNewestWindowsOf(t, w, mode, *v) }, true
			case perView && base == warehouse.ListView:
				test, ok = func(t *testing.T, w Warehouse, mode string) { testListViewOf(t, w, mode, *v, q.Name) }, true
			}
		}
		t.Run("Read/"+name, func(t *testing.T) {
			if !ok {
				t.Fatalf("named read %s has no test in warehousetest (reads.go)", q.Name)
			}
			test(t, open(t), mode)
		})
	}
}

// testListings checks every listing's columns and types and, for the
// tables it seeds, its own rows in order.
func testListings(t *testing.T, w Warehouse, mode string) {
	ctx := context.Background()
	tag := newTag(t)
	d := tagDay(tag)
	fecha := warehouse.FormatDate(d)
	load(t, w, tag+"-l1",
		line{tag + "-p2", 1, fecha, tag + "-s1", 1, "0.2", "", "FR", tag + "/l.csv", 1, 4},
		line{tag + "-p1", 2, fecha, tag + "-s2", 2, "0.10", "c1", "ES", tag + "/l.csv", 1, 3},
		line{tag + "-p1", 1, fecha, tag + "-s1", 3, "1", "c1", "ES", tag + "/l.csv", 1, 2})
	if err := w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, []int32{d}); err != nil {
		t.Fatalf("RefreshDaily: %v", err)
	}
	start := warehouse.DayTime(d).Add(10 * time.Hour)
	h := func(n int) string { return start.Add(time.Duration(n) * time.Hour).Format(time.RFC3339) }
	add(t, w, warehouse.VentasHoraPaisPaneles,
		pane(t, tag, mode, h(1), "ES", 0, "EARLY", "1.5", 1, 1),
		pane(t, tag, mode, h(0), "PT", 0, "ON_TIME", "2", 1, 2),
		pane(t, tag, mode, h(0), "ES", 0, "ON_TIME", "3", 1, 3),
	)
	appendDrops(t, w,
		drop{id: tag + "-2", pedido: tag + "-q2", aggregation: tag, reason: warehouse.ReasonTooLate, event: start, window: start, received: start.Add(2 * time.Hour)},
		drop{id: tag + "-1", pedido: tag + "-q1", reason: "invalid: " + tag, event: start, received: start.Add(time.Hour)},
	)
	mine := func(c int, prefix string) func([]string) bool {
		return func(r []string) bool { return strings.HasPrefix(r[c], prefix) }
	}
	inDay := func(r []string) bool { return strings.HasPrefix(r[0], fecha) }
	// pane 0's watermark and emission (see pane) in the window at h(n).
	wm := func(n int) string { return start.Add(time.Duration(n)*time.Hour + 50*time.Minute).Format(time.RFC3339) }
	em := func(n int) string { return start.Add(time.Duration(n)*time.Hour + 61*time.Minute).Format(time.RFC3339) }
	tests := []struct {
		name  string
		cols  []string
		types []warehouse.Type
		keep  func([]string) bool // the test's rows; nil: rows not checked
		want  [][]string
	}{
		{name: warehouse.ListLineasPedido, keep: mine(0, tag),
			cols:  []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "importe", "pais", "source_line"},
			types: []warehouse.Type{warehouse.String, warehouse.Int64, warehouse.Date, warehouse.String, warehouse.Int64, warehouse.Numeric, warehouse.Numeric, warehouse.String, warehouse.Int64},
			want: [][]string{
				{tag + "-p1", "1", fecha, tag + "-s1", "3", "1", "3", "ES", "2"},
				{tag + "-p1", "2", fecha, tag + "-s2", "2", "0.1", "0.2", "ES", "3"},
				{tag + "-p2", "1", fecha, tag + "-s1", "1", "0.2", "0.2", "FR", "4"},
			}},
		{name: warehouse.ListOpiniones,
			cols:  []string{"opinion_id", "sku", "fecha", "puntuacion", "pais", "texto"},
			types: []warehouse.Type{warehouse.String, warehouse.String, warehouse.Date, warehouse.Int64, warehouse.String, warehouse.String}},
		{name: warehouse.ListVentasDiariasSKU, keep: mine(1, tag),
			cols:  []string{"fecha", "sku", "unidades", "importe", "lineas"},
			types: []warehouse.Type{warehouse.Date, warehouse.String, warehouse.Int64, warehouse.Numeric, warehouse.Int64},
			want:  [][]string{{fecha, tag + "-s1", "4", "3.2", "2"}, {fecha, tag + "-s2", "2", "0.2", "1"}}},
		{name: warehouse.ListPanes, keep: inDay,
			cols:  []string{"window_start", "pais", "pane_index", "timing", "importe", "pedidos", "unidades", "watermark", "emitted_at"},
			types: []warehouse.Type{warehouse.Timestamp, warehouse.String, warehouse.Int64, warehouse.String, warehouse.Numeric, warehouse.Int64, warehouse.Int64, warehouse.Timestamp, warehouse.Timestamp},
			want: [][]string{
				{h(0), "ES", "0", "ON_TIME", "3", "1", "3", wm(0), em(0)},
				{h(0), "PT", "0", "ON_TIME", "2", "1", "2", wm(0), em(0)},
				{h(1), "ES", "0", "EARLY", "1.5", "1", "1", wm(1), em(1)},
			}},
		{name: warehouse.ListView, keep: inDay,
			cols:  []string{"window_start", "window_end", "pais", "importe", "pedidos", "unidades", "timing", "pane_index"},
			types: []warehouse.Type{warehouse.Timestamp, warehouse.Timestamp, warehouse.String, warehouse.Numeric, warehouse.Int64, warehouse.Int64, warehouse.String, warehouse.Int64},
			want: [][]string{
				{h(0), h(1), "ES", "3", "1", "3", "ON_TIME", "0"},
				{h(0), h(1), "PT", "2", "1", "2", "ON_TIME", "0"},
				{h(1), h(2), "ES", "1.5", "1", "1", "EARLY", "0"},
			}},
		{name: warehouse.ListDiscards, keep: mine(0, tag),
			cols:  []string{"pedido_id", "aggregation", "reason", "event_time", "window_start", "watermark", "received_at"},
			types: []warehouse.Type{warehouse.String, warehouse.String, warehouse.String, warehouse.Timestamp, warehouse.Timestamp, warehouse.Timestamp, warehouse.Timestamp},
			want: [][]string{
				{tag + "-q1", "NULL", "invalid: " + tag, h(0), "NULL", "NULL", h(1)},
				{tag + "-q2", tag, warehouse.ReasonTooLate, h(0), h(0), "NULL", h(2)},
			}},
	}
	var names []string
	for _, tc := range tests {
		names = append(names, tc.name)
	}
	diff(t, "the listings checked", listings, names)
	for _, tc := range tests {
		res, types, err := warehouse.ReadListing(ctx, w, tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		diff(t, tc.name+" columns", tc.cols, res.Columns)
		diff(t, tc.name+" types", tc.types, types)
		if tc.keep == nil {
			continue
		}
		got := [][]string{}
		for _, r := range res.Rows {
			if tc.keep(r) {
				got = append(got, r)
			}
		}
		if tc.name == warehouse.ListView {
			diffViewRows(t, w, mode, viewOf(t, warehouse.VentasHoraPais), tag, tc.name+" rows", tc.want, got, viewCols{start: 0, key: 2, importe: 3})
			continue
		}
		diff(t, tc.name+" rows", tc.want, got)
	}
}

// viewPane is a pane of v of one order in the hour window starting at ws.
func viewPane(t *testing.T, v warehouse.View, tag, mode string, ws time.Time, key string, index int64,
	importe string, unidades int64, timing string) warehouse.Row {
	return paneRow{start: ws, end: ws.Add(time.Hour), key: key, timing: timing, importe: importe, index: index,
		pedidos: 1, unidades: unidades, watermark: ws, emitted: ws.Add(time.Minute)}.row(t, v, tag, mode)
}

// seedViewPanes appends to v's panes, out of order, windows of tagDay(tag)
// at 09:00 (A, B), 09:15 (A in two panes: both modes show 3 and 2 units)
// and 09:30 (B). It returns 09:00 and A's orders at 09:15 in the view.
func seedViewPanes(t *testing.T, w Warehouse, v warehouse.View, tag, mode string) (start time.Time, pedidosA int64) {
	start = warehouse.DayTime(tagDay(tag)).Add(9 * time.Hour)
	row := func(minutes int, key string, index int64, importe string, unidades int64) warehouse.Row {
		return viewPane(t, v, tag, mode, start.Add(time.Duration(minutes)*time.Minute), key, index, importe, unidades, "ON_TIME")
	}
	second, pedidosA := row(15, "A", 1, "3", 2), int64(1)
	if mode == warehouse.Discarding {
		second, pedidosA = row(15, "A", 1, "2", 1), 2
	}
	add(t, w, v.Panes,
		row(15, "A", 0, "1", 1), second, row(30, "B", 0, "99999999999999999999.999999999", 9), row(0, "B", 0, "7", 7), row(0, "A", 0, "0.5", 1),
	)
	return start, pedidosA
}

// testPanesOf checks a declared aggregation's panes read.
func testPanesOf(t *testing.T, w Warehouse, mode string, v warehouse.View) {
	ctx := context.Background()
	tag := newTag(t)
	start := warehouse.DayTime(tagDay(tag)).Add(9 * time.Hour)
	row := func(offset time.Duration, key string, index int64, importe string) warehouse.Row {
		return viewPane(t, v, tag, mode, start.Add(offset), key, index, importe, index+1, "EARLY")
	}
	add(t, w, v.Panes,
		row(15*time.Minute, "B", 0, "2"), row(0, "B", 1, "1.10"), row(0, "A", 0, "0.000000001"), row(0, "B", 0, "1"),
		row(45*time.Minute, "A", 0, "99999999999999999999.999999999"),
	)
	late := start.Add(45 * time.Minute)
	got := must[[]warehouse.Pane](t, "panes of "+v.Name)(warehouse.ReadPanes(ctx, w, v.Name, tag, []time.Time{late, start}))
	pane := func(at time.Time, key string, index int64, importe string) warehouse.Pane {
		return warehouse.Pane{WindowStart: at, Key: key, PaneIndex: index, Timing: "EARLY", Importe: dec(t, importe), Pedidos: 1, Unidades: index + 1}
	}
	diff(t, "panes of "+v.Name, []warehouse.Pane{pane(start, "A", 0, "0.000000001"), pane(start, "B", 0, "1"),
		pane(start, "B", 1, "1.1"), pane(late, "A", 0, "99999999999999999999.999999999")}, got)
	none := must[[]warehouse.Pane](t, "panes of "+v.Name)(warehouse.ReadPanes(ctx, w, v.Name, tag, nil))
	diff(t, "panes of no window", []warehouse.Pane{}, none)
}

// testNewestWindowsOf checks another declared view's newest-windows read.
func testNewestWindowsOf(t *testing.T, w Warehouse, mode string, v warehouse.View) {
	ctx := context.Background()
	tag := newTag(t)
	start, pedidosA := seedViewPanes(t, w, v, tag, mode)
	at := func(minutes int) time.Time { return start.Add(time.Duration(minutes) * time.Minute) }
	a0, b0 := sale(t, start, "A", "0.5", 1, 1, "ON_TIME", 0), sale(t, start, "B", "7", 1, 7, "ON_TIME", 0)
	a15 := sale(t, at(15), "A", "3", pedidosA, 2, "ON_TIME", 1)
	b30 := sale(t, at(30), "B", "99999999999999999999.999999999", 1, 9, "ON_TIME", 0)
	tests := []struct {
		name string
		q    warehouse.NewestWindows
		want []warehouse.HourlySale
	}{
		{name: "the newest two windows", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 2}, want: []warehouse.HourlySale{a15, b30}},
		{name: "the newest two windows holding A", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 2, Keys: []string{"A"}},
			want: []warehouse.HourlySale{a0, a15}},
		{name: "a range", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag, Windows: 24, From: start, Until: start.Add(30 * time.Minute)},
			want: []warehouse.HourlySale{a0, b0, a15}},
		{name: "another aggregation", q: warehouse.NewestWindows{View: v.Name, Aggregation: tag + "y", Windows: 24}, want: []warehouse.HourlySale{}},
	}
	for _, tc := range tests {
		got := must[[]warehouse.HourlySale](t, tc.name)(warehouse.ReadNewestWindows(ctx, w, tc.q))
		diffSales(t, w, mode, v, tag, v.Name+": "+tc.name, tc.want, got)
	}
	if _, err := warehouse.ReadNewestWindows(ctx, w, warehouse.NewestWindows{View: v.Name + "_x", Aggregation: tag, Windows: 1}); err == nil {
		t.Errorf("newest windows of undeclared view %s_x: no error", v.Name)
	}
}

// testListViewOf checks another declared view's listing.
func testListViewOf(t *testing.T, w Warehouse, mode string, v warehouse.View, name string) {
	ctx := context.Background()
	if got, ok := warehouse.ViewListing(v.Name); !ok || got != name {
		t.Errorf("ViewListing(%s) = %q, %v; want %q, true", v.Name, got, ok, name)
	}
	if _, ok := warehouse.ViewListing(v.Name + "_x"); ok {
		t.Errorf("ViewListing(%s_x): a listing of an undeclared view", v.Name)
	}
	tag := newTag(t)
	fecha := warehouse.FormatDate(tagDay(tag))
	start, pedidosA := seedViewPanes(t, w, v, tag, mode)
	res, types, err := warehouse.ReadListing(ctx, w, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	diff(t, name+" columns", []string{"window_start", "window_end", v.Key, "importe", "pedidos", "unidades", "timing", "pane_index"}, res.Columns)
	diff(t, name+" types", []warehouse.Type{warehouse.Timestamp, warehouse.Timestamp, warehouse.String, warehouse.Numeric,
		warehouse.Int64, warehouse.Int64, warehouse.String, warehouse.Int64}, types)
	at := func(offset time.Duration) string { return start.Add(offset).Format(time.RFC3339) }
	got := [][]string{}
	for _, r := range res.Rows {
		if strings.HasPrefix(r[0], fecha) {
			got = append(got, r)
		}
	}
	diffViewRows(t, w, mode, v, tag, name+" rows", [][]string{
		{at(0), at(time.Hour), "A", "0.5", "1", "1", "ON_TIME", "0"},
		{at(0), at(time.Hour), "B", "7", "1", "7", "ON_TIME", "0"},
		{at(15 * time.Minute), at(75 * time.Minute), "A", "3", strconv.FormatInt(pedidosA, 10), "2", "ON_TIME", "1"},
		{at(30 * time.Minute), at(90 * time.Minute), "B", "99999999999999999999.999999999", "1", "9", "ON_TIME", "0"},
	}, got, viewCols{start: 0, key: 2, importe: 3})
}
