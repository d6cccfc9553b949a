package warehousetest

import (
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

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

func testDiscardSummary(t *testing.T, w Warehouse, mode, tag string) {
	read := func(since, from, until time.Time) warehouse.DiscardSummary {
		q := warehouse.DiscardSummaryQuery{Aggregation: tag, Latest: 2, Since: since, From: from, Until: until}
		return must[warehouse.DiscardSummary](t, "discard_summary")(warehouse.ReadDiscardSummary(t.Context(), w, q))
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

func testDiscardCounts(t *testing.T, w Warehouse, _, tag string) {
	since := future.Add(time.Hour)
	read := func() warehouse.DiscardCounts {
		return must[warehouse.DiscardCounts](t, "discard_counts")(warehouse.ReadDiscardCounts(t.Context(), w, since))
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

func testDiscardReasons(t *testing.T, w Warehouse, _, tag string) {
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
	got := must[[]warehouse.ReasonCount](t, "discard_reasons")(warehouse.ReadDiscardReasons(t.Context(), w, since, 3))
	diff(t, "reasons", []warehouse.ReasonCount{
		{Reason: "invalid: " + tag + " b", Count: 2},
		{Reason: "invalid: " + tag + " a", Count: 1},
		{Reason: "invalid: " + tag + " c", Count: 1},
	}, got)
}

func testDayDrops(t *testing.T, w Warehouse, _, tag string) {
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
	got := must[[]warehouse.DayDrop](t, "day_drops")(warehouse.ReadDayDrops(t.Context(), w, d, tag, from, until))
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
