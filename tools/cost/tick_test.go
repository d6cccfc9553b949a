package cost

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestTickReadsAreBounded proves on the counting store that a tick reads a
// small constant, each dedup record of its generation once and the state
// documents of the windows it visits, never the open state: with windows
// of 30 countries open, a tick after nothing reads the constant, a tick
// after one order a few documents more, and an idle hour of ticks the
// constant each.
func TestTickReadsAreBounded(t *testing.T) {
	store := newCounting(t)
	p, err := stream.New(store, NewCountingSink([]window.Spec{window.Defaults()}), []window.Spec{window.Defaults()}, contract.IsCountry, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	countries := []string{}
	for _, c := range defaultCountries() {
		countries = append(countries, c.Code)
	}
	seq := 0
	deliver := func(now time.Time, key string) {
		t.Helper()
		seq++
		id := "T-" + strconv.Itoa(seq)
		d := order.Delivery{Format: "push", Message: order.Message{MessageID: "m-" + id,
			Data:       []byte(`{"pedido_id":"` + id + `","pais":"` + key + `","importe_total":"10.00","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"10.00"}]}`),
			Attributes: map[string]string{order.EventTimeAttribute: now.Add(-5 * time.Second).Format(time.RFC3339Nano)}}}
		store.SetPhase(PhaseOrder)
		if res, err := p.Handle(ctx, d, now); err != nil || res.Fate() != stream.Accepted {
			t.Fatalf("order %s: %+v, %v", id, res, err)
		}
	}
	type tickCount struct{ reads, visited, records, open int64 }
	tickReads := func(now time.Time) tickCount {
		t.Helper()
		store.SetPhase(PhaseTick)
		before := store.Ops(PhaseTick)
		res, err := p.Tick(ctx, now)
		if err != nil {
			t.Fatalf("tick at %s: %v", now, err)
		}
		at := res.Aggregations[0]
		return tickCount{store.Ops(PhaseTick).Sub(before).BilledReads(), int64(at.Visited), int64(at.Records), int64(at.OpenWindows)}
	}
	// What every tick reads (stream's tickLive): the dead letters' outbox
	// and the aggregation's outbox (a query each, one read when empty), the
	// lease (taken and released: 2), the fold state (the fold document and
	// stream/control: 2), stream/control again to learn the open
	// generation, the open generation asked for one record (limit 1: one
	// read, found or not), the
	// advance transaction (stream/control), the generation the advance
	// closes when W moved (a listing that finds nothing here: the tick runs
	// alone), and the fold transaction's fold document and stream/control.
	const base = 2 + 2 + 2 + 1 + 1 + 1 + 1 + 2
	// Besides: each record of the generation is listed once, when it is
	// final (here an order is one record of one element), the
	// close is one more transaction on stream/control, and every visited
	// window's state documents are read once: one per window here (30
	// keys), so at most one per key visited (a visited window runs the
	// trigger of each of its keys).
	check := func(what string, c tickCount) {
		t.Helper()
		close := int64(0)
		if c.records > 0 {
			close = 1
		}
		if c.reads > base+close+c.records+c.visited {
			t.Errorf("%s: %d reads for %d records listed and %d keys visited, want at most %d + 1 + 2 per record + 1 per key visited",
				what, c.reads, c.records, c.visited, base)
		}
	}

	// Three busy hours: every country orders every minute, so windows of
	// 30 keys are open for the current hour and the two of lateness.
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	now := start
	var busiest, total tickCount
	for m := range 180 {
		now = start.Add(time.Duration(m) * time.Minute)
		for _, c := range countries {
			deliver(now.Add(time.Second), c)
		}
		c := tickReads(now.Add(30 * time.Second))
		check(fmt.Sprintf("busy tick %d", m), c)
		if c.reads > busiest.reads {
			busiest = c
		}
		total.reads, total.visited, total.records = total.reads+c.reads, total.visited+c.visited, total.records+c.records
	}
	// Every country orders every minute: each open window holds all 30
	// keys, and the current hour and the two of lateness are open at least.
	open := tickReads(now.Add(45 * time.Second)).open
	if open < 3 {
		t.Fatalf("%d windows open, want at least 3 for the test to mean anything", open)
	}

	// Mid-hour, no boundary near: two minutes with nothing (the first one
	// still owes the EARLY panes of the last orders), then one with ES only.
	now = now.Add(time.Minute).Truncate(time.Minute)
	check("quiet tick with due EARLY panes", tickReads(now.Add(30*time.Second)))
	now = now.Add(time.Minute)
	quiet := tickReads(now.Add(30 * time.Second))
	check("quiet tick", quiet)
	now = now.Add(time.Minute)
	deliver(now.Add(time.Second), "ES")
	one := tickReads(now.Add(30 * time.Second))
	check("tick after one order", one)
	t.Logf("%d windows of 30 keys open; reads per tick over 3 busy hours: %d on average (%.1f records folded, %.1f keys visited), busiest %d (%d visited); nothing changed: %d; one key changed: %d (%d visited)",
		open, total.reads/180, float64(total.records)/180, float64(total.visited)/180, busiest.reads, busiest.visited, quiet.reads, one.reads, one.visited)
	if quiet.visited != 0 || quiet.reads > base {
		t.Errorf("a tick with nothing changed or due visited %d keys and read %d documents, want none and at most %d", quiet.visited, quiet.reads, base)
	}
	// One order: its record listed once, the close, its window's one state
	// document; and the generation the advance closes if W moved now but
	// not in the quiet tick. Its window's 30 keys get their trigger.
	if one.visited > 30 || one.reads > quiet.reads+4 {
		t.Errorf("a tick after one order visited %d keys and read %d documents, want at most 30 (one window) and %d", one.visited, one.reads, quiet.reads+4)
	}

	// The night: everything closes and expires, then an idle hour is counted.
	for m := range 5 * 60 {
		check("night tick", tickReads(now.Add(time.Duration(m+1)*time.Minute)))
	}
	now = now.Add(5 * time.Hour)
	var idle int64
	for m := range 60 {
		idle += tickReads(now.Add(time.Duration(m+1) * time.Minute)).reads
	}
	t.Logf("an idle hour of 60 ticks read %d documents", idle)
	// Idle: the constant only (W moves every idle tick, so the generation
	// the advance closes is listed too).
	if idle > 60*base {
		t.Errorf("an idle hour of ticks read %d documents, want at most %d", idle, 60*base)
	}
	if last := tickReads(now.Add(61 * time.Minute)); last.open != 0 {
		t.Errorf("after the night: %d windows open, want none", last.open)
	}
}
