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
// small constant plus a few documents per cell that changed or has a timer
// due, never the open state: with 120 (window, key)s open, a tick after
// one country's order reads about as much as a tick after none, and an
// idle hour of ticks reads almost nothing.
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
	type tickCount struct{ reads, visited, deltas int64 }
	tickReads := func(now time.Time) tickCount {
		t.Helper()
		store.SetPhase(PhaseTick)
		before := store.Ops(PhaseTick)
		res, err := p.Tick(ctx, now)
		if err != nil {
			t.Fatalf("tick at %s: %v", now, err)
		}
		at := res.Aggregations[0]
		return tickCount{store.Ops(PhaseTick).Sub(before).BilledReads(), int64(at.Visited), int64(at.Deltas)}
	}
	// What a tick reads besides its visits: the lease (2), the two outboxes
	// (dead letters and panes), the deltas, the agenda (one per open window:
	// 4 here at most), the watermark.
	const base = 2 + 2 + 1 + 4 + 1
	// Per visited cell: the watermark, the cell, its deltas (all 8 numbers
	// when the ON_TIME pane or expiry is due), and its agenda document; and
	// one per delta listed (a change since the last tick).
	const perVisit = 11
	check := func(what string, c tickCount) {
		t.Helper()
		if c.reads > base+c.deltas+perVisit*c.visited {
			t.Errorf("%s: %d reads for %d deltas listed and %d cells visited, want at most %d + 1 per delta + %d per visit",
				what, c.reads, c.deltas, c.visited, base, perVisit)
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
		total.reads, total.visited, total.deltas = total.reads+c.reads, total.visited+c.visited, total.deltas+c.deltas
	}
	st, err := p.Status(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	open := len(st[0].OpenWindows)
	if open < 90 {
		t.Fatalf("%d (window, key)s open, want at least 90 for the test to mean anything", open)
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
	t.Logf("%d (window, key)s open; reads per tick over 3 busy hours: %d on average (%.1f deltas listed, %.1f cells visited), busiest %d (%d visited); nothing changed: %d; one key changed: %d (%d visited)",
		open, total.reads/180, float64(total.deltas)/180, float64(total.visited)/180, busiest.reads, busiest.visited, quiet.reads, one.reads, one.visited)
	if quiet.visited != 0 || quiet.reads > base {
		t.Errorf("a tick with nothing changed or due visited %d cells and read %d documents, want none and at most %d", quiet.visited, quiet.reads, base)
	}
	if one.visited > 1 || one.reads > quiet.reads+5 {
		t.Errorf("a tick after one order visited %d cells and read %d documents, want at most 1 and %d", one.visited, one.reads, quiet.reads+5)
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
	// Idle: the lease (2), the outboxes (2), the deltas, the agenda and
	// the watermark, each a query that finds nothing or one document.
	if idle > 60*7 {
		t.Errorf("an idle hour of ticks read %d documents, want at most %d", idle, 60*7)
	}
	if st, err := p.Status(ctx, now); err != nil || len(st[0].OpenWindows) != 0 {
		t.Errorf("after the night: %v, %v; want no window open", st, err)
	}
}
