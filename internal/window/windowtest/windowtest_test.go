package windowtest_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

func TestRandomSpecIsValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		if s := windowtest.RandomSpec(r); s.Validate() != nil {
			t.Fatalf("RandomSpec() = %+v: %v", s, s.Validate())
		}
	}
}

func TestStreamShape(t *testing.T) {
	spec := window.Defaults()
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	gen := func(seed uint64, open bool) []windowtest.MultiEvent {
		return windowtest.Stream(rand.New(rand.NewPCG(seed, 4)), spec,
			windowtest.StreamConfig{Start: start, Events: 2000, Keys: []string{"ES", "IT"}, Open: open})
	}
	events := gen(3, false)
	if diff := cmp.Diff(events, gen(3, false)); diff != "" {
		t.Fatalf("same seed, different streams (-a +b):\n%s", diff)
	}
	if cmp.Equal(events, gen(8, false)) {
		t.Errorf("different seeds gave the same stream")
	}
	counts := map[string]int{}
	seenMsg, seenOrder := map[string]bool{}, map[string]bool{}
	prev := start
	for i, e := range events {
		if e.Now.Before(prev) {
			t.Fatalf("event %d at %s goes back from %s", i, e.Now, prev)
		}
		prev = e.Now
		switch {
		case e.Kind == windowtest.Tick:
			counts["tick"]++
		case e.Invalid != "":
			counts["invalid"]++
		case seenMsg[e.MessageID]:
			counts["redelivery"]++
		case seenOrder[e.Order.PedidoID]:
			counts["republish"]++
		case e.Order.EventTime.After(e.Now):
			counts["future"]++
		case e.Now.Sub(e.Order.EventTime) > spec.WindowSize+spec.AllowedLateness:
			counts["very late"]++
		default:
			counts["order"]++
		}
		if e.Kind == windowtest.Deliver && e.Invalid == "" {
			if e.Order.Pais != "ES" && e.Order.Pais != "IT" {
				t.Fatalf("event %d has key %q outside the configured keys", i, e.Order.Pais)
			}
			if o := e.Order; len(o.Lineas) != 1 || o.Lineas[0].Cantidad < 1 || o.ImporteTotal.Sign() <= 0 {
				t.Fatalf("event %d has an implausible order %+v", i, o)
			}
		}
		seenMsg[e.MessageID], seenOrder[e.Order.PedidoID] = true, true
	}
	for _, k := range []string{"tick", "invalid", "redelivery", "republish", "future", "very late", "order"} {
		if counts[k] == 0 {
			t.Errorf("no %s in 2000 events: %v", k, counts)
		}
	}
	if last := events[len(events)-1]; last.Kind != windowtest.Tick || last.Now.Sub(events[len(events)-2].Now) < 24*time.Hour {
		t.Errorf("the stream does not end with a closing tick: %+v", last)
	}
	if open := gen(3, true); len(open) != len(events)-1 {
		t.Errorf("open stream has %d events, want %d (no closing tick)", len(open), len(events)-1)
	}
}

// The model on a short story whose panes are worked out by hand: defaults
// (D 10 min, I 5 min, E 60 s, L 2 h, Ld 60 s), UTC.
func TestModelStory(t *testing.T) {
	spec := window.Defaults()
	m := windowtest.NewMulti(spec)
	ord := func(now, msg, id, evt string) windowtest.MultiEvent {
		return deliver(now, msg, id, "ES", evt, "1", line("GORRO-LANA", 1, "1"))
	}
	steps := []windowtest.MultiEvent{
		ord("17:51", "1", "P-1", "17:42"),
		tickAt("17:52"),                   // W 17:32, EARLY 0
		tickAt("18:20"),                   // idle: W 18:10, ON_TIME 1
		ord("18:21", "2", "P-2", "17:10"), // LATE 2
		ord("18:22", "2", "P-2", "17:10"), // duplicate
		{Kind: windowtest.Deliver, Now: utc("18:23"), MessageID: "3", Invalid: "invalid: bad JSON"},
		tickAt("20:30"),                   // W 20:20: expired
		ord("20:31", "4", "P-3", "17:59"), // too late
	}
	var timings []window.Timing
	for _, e := range steps {
		for _, p := range m.Apply(e) {
			timings = append(timings, p.Timing)
		}
	}
	wantTimings := []window.Timing{window.TimingEarly, window.TimingOnTime, window.TimingLate}
	if diff := cmp.Diff(wantTimings, timings); diff != "" {
		t.Errorf("timings (-want +got):\n%s", diff)
	}
	w := window.Window{Start: utc("17:00"), End: utc("18:00")}
	wantFates := map[windowtest.OrderWindow]windowtest.Fate{
		{PedidoID: "P-1", WindowStart: w.Start}: windowtest.Accepted,
		{PedidoID: "P-2", WindowStart: w.Start}: windowtest.Accepted,
		{PedidoID: "P-3", WindowStart: w.Start}: windowtest.Dropped,
	}
	if diff := cmp.Diff(wantFates, m.Fates(spec.Name)); diff != "" {
		t.Errorf("fates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3"}, m.InvalidMessages()); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	wantDrops := []windowtest.Drop{
		{PedidoID: "P-3", WindowStart: w.Start, Watermark: utc("20:20"), ReceivedAt: utc("20:31")},
	}
	if diff := cmp.Diff(wantDrops, m.Drops(spec.Name)); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	if !m.Watermark(spec.Name).Equal(utc("20:20")) || !m.Settled() {
		t.Errorf("W = %s settled = %v, want 20:20 and settled", m.Watermark(spec.Name), m.Settled())
	}
	want := map[window.WindowKey]window.Measures{
		{Window: w, Key: "ES"}: {Importe: money("2"), Pedidos: 2, Unidades: 2},
	}
	if diff := cmp.Diff(want, m.Final(spec.Name)); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if err := m.CheckPanes(spec.Name, m.Panes(spec.Name)); err != nil {
		t.Errorf("the model's own panes: %v", err)
	}
}

func TestView(t *testing.T) {
	w := window.Window{Start: utc("17:00"), End: utc("18:00")}
	const acc, dis = window.Accumulating, window.Discarding
	mk := func(idx int64, mode window.Accumulation, pedidos int64) window.Pane {
		return window.Pane{Aggregation: "a", Key: "ES", WindowStart: w.Start, WindowEnd: w.End, Index: idx,
			Accumulation: mode, Measures: window.Measures{Importe: numeric.FromNanos(pedidos * 10), Pedidos: pedidos}}
	}
	view := func(pedidos int64) map[window.WindowKey]window.Measures {
		return map[window.WindowKey]window.Measures{{Window: w, Key: "ES"}: mk(0, acc, pedidos).Measures}
	}
	tests := []struct {
		name  string
		panes []window.Pane
		want  map[window.WindowKey]window.Measures
	}{
		{"none", nil, map[window.WindowKey]window.Measures{}},
		{"accumulating: the highest index, whatever the order", []window.Pane{mk(2, acc, 5), mk(0, acc, 1), mk(1, acc, 3)}, view(5)},
		{"discarding: the sum", []window.Pane{mk(1, dis, 2), mk(0, dis, 1), mk(2, dis, 0)}, view(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := windowtest.View(tt.panes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckWatermark(t *testing.T) {
	spec := window.Defaults()
	now := time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		prev, got time.Time
		want      string
	}{
		{name: "first watermark", got: now.Add(-time.Hour)},
		{name: "unchanged", prev: now.Add(-time.Hour), got: now.Add(-time.Hour)},
		{name: "exactly now - D", prev: now.Add(-time.Hour), got: now.Add(-10 * time.Minute)},
		{name: "went back", prev: now.Add(-time.Hour), got: now.Add(-2 * time.Hour), want: "went back"},
		{name: "ahead of now - D", prev: now.Add(-time.Hour), got: now.Add(-9 * time.Minute), want: "ahead of now - D"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := windowtest.CheckWatermark(spec, tt.prev, tt.got, now)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckWatermark = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestChecksDetectViolations proves the checks can fail: each row breaks the
// model's own correct output in one way; TestMultiChecksDetectViolations
// proves CheckDrops and CheckFates.
func TestChecksDetectViolations(t *testing.T) {
	spec := window.Defaults()
	spec.Accumulation = window.Discarding
	m := windowtest.NewMulti(spec)
	for _, e := range windowtest.Stream(rand.New(rand.NewPCG(11, 12)), spec, windowtest.StreamConfig{Events: 300}) {
		m.Apply(e)
	}
	good := m.Panes(spec.Name)
	if len(good) < 10 {
		t.Fatalf("the stream is too dull to test the checks: %d panes", len(good))
	}
	if err := m.CheckPanes(spec.Name, good); err != nil {
		t.Fatalf("correct panes rejected: %v", err)
	}
	// Find a window with an ON_TIME pane after an EARLY one.
	onTime, before := -1, -1
	for i, p := range good {
		if p.Timing == window.TimingOnTime && p.Index > 0 {
			onTime = i
			break
		}
	}
	for i, p := range good {
		if onTime >= 0 && p.WindowStart.Equal(good[onTime].WindowStart) && p.Key == good[onTime].Key && p.Index == good[onTime].Index-1 {
			before = i
		}
	}
	if onTime < 0 || before < 0 || good[before].Timing != window.TimingEarly {
		t.Fatalf("no EARLY pane followed by ON_TIME in the stream")
	}
	with := func(i int, f func(*window.Pane)) []window.Pane { ps := slices.Clone(good); f(&ps[i]); return ps }
	extra := func(f func(*window.Pane)) []window.Pane { p := good[0]; f(&p); return append(slices.Clone(good), p) }
	tests := []struct {
		name, want string
		panes      []window.Pane
	}{
		{"a pane lost", "not contiguous", slices.Delete(slices.Clone(good), before, before+1)},
		{"last pane lost", "final value", good[:len(good)-1]},
		{"a pane rewritten with other content", "written twice", extra(func(p *window.Pane) { p.Measures.Pedidos++ })},
		{"ON_TIME turned EARLY after W reached the end", "EARLY at watermark",
			with(onTime, func(p *window.Pane) { p.Timing = window.TimingEarly })},
		{"ON_TIME turned LATE", "ON_TIME panes, want 1", with(onTime, func(p *window.Pane) { p.Timing = window.TimingLate })},
		{"EARLY turned ON_TIME", "ON_TIME at watermark", with(before, func(p *window.Pane) { p.Timing = window.TimingOnTime })},
		{"wrong mode", "mode ACCUMULATING", with(0, func(p *window.Pane) { p.Accumulation = window.Accumulating })},
		{"a pane for a window without orders", "no accepted order", extra(func(p *window.Pane) { p.Key = "ZZ" })},
		{"no panes at all", "no pane, the model emitted", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.CheckPanes(spec.Name, tt.panes)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckPanes = %v, want a problem mentioning %q", err, tt.want)
			}
		})
	}

	t.Run("identical rewrites are harmless", func(t *testing.T) {
		if err := m.CheckPanes(spec.Name, append(good, good...)); err != nil {
			t.Errorf("CheckPanes = %v", err)
		}
	})
	t.Run("CheckSequences without the model", func(t *testing.T) {
		if err := windowtest.CheckSequences(spec, good); err != nil {
			t.Errorf("correct panes rejected: %v", err)
		}
		early := with(onTime, func(p *window.Pane) { p.Timing = window.TimingEarly })
		if err := windowtest.CheckSequences(spec, early); err == nil || !strings.Contains(err.Error(), "EARLY at watermark") {
			t.Errorf("CheckSequences = %v, want a problem mentioning %q", err, "EARLY at watermark")
		}
	})
}

// utc is hh:mm on 2026-03-14 in UTC.
func utc(hhmm string) time.Time {
	t, err := time.Parse(time.DateTime, "2026-03-14 "+hhmm+":00")
	if err != nil {
		panic(err)
	}
	return t
}

func money(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

func line(sku string, n int64, price string) order.Line {
	return order.Line{SKU: sku, Cantidad: n, PrecioUnitario: money(price)}
}

func deliver(now, msg, id, pais, eventTime, total string, lines ...order.Line) windowtest.MultiEvent {
	return windowtest.MultiEvent{Kind: windowtest.Deliver, Now: utc(now), MessageID: msg, Order: order.Order{
		PedidoID: id, ClienteID: "C-" + id, Pais: pais, ImporteTotal: money(total), Lineas: lines, EventTime: utc(eventTime)}}
}

func tickAt(now string) windowtest.MultiEvent {
	return windowtest.MultiEvent{Kind: windowtest.Tick, Now: utc(now)}
}

func mpane(agg, key, start string, size time.Duration, idx int64, timing window.Timing,
	importe string, pedidos, unidades int64, wm, emitted string) window.Pane {
	return window.Pane{Aggregation: agg, Key: key, WindowStart: utc(start), WindowEnd: utc(start).Add(size),
		Index: idx, Timing: timing, Accumulation: window.Accumulating,
		Measures:  window.Measures{Importe: money(importe), Pedidos: pedidos, Unidades: unidades},
		Watermark: utc(wm), EmittedAt: utc(emitted)}
}

// An order too late for its oldest sliding windows still counts in its
// newer ones, each dropped (order, window) is recorded with its window, and
// the fixed and session aggregations beside it count the same order as a
// late one.
// Defaults: D 10 min, I 5 min, E 60 s, L 2 h, Ld 60 s.
func TestMultiTooLateForOldestWindowCountsInNewer(t *testing.T) {
	specs := windowtest.ShippedSpecs()
	const pais, sku = "ventas_hora_pais", "ventas_sku_hora_movil"
	m := windowtest.NewMulti(specs...)
	m.Apply(deliver("19:45", "m1", "P-0", "ES", "19:45", "10", line("GORRO-LANA", 1, "10")))
	m.Apply(tickAt("19:46")) // both: W = 19:45 - 10 min = 19:35 (and EARLY panes of P-0)
	var panes []window.Pane
	for _, e := range []windowtest.MultiEvent{
		// Made at 17:10: windows 16:15, 16:30, 16:45, 17:00 (ends 17:15 to
		// 18:00, expiries 19:15 to 20:00). At W = 19:35 the first two are
		// too late, the last two late but within L.
		deliver("19:47", "m2", "P-1", "FR", "17:10", "27.50",
			line("MOCH-40L-AZ", 2, "10"), line(" ", 1, "5"), line("moch-40l-az ", 1, "2.5")),
		deliver("19:48", "m3", "P-1", "FR", "17:10", "27.50"), // republished: counted once
		tickAt("19:49"), // the late changes are Ld old: LATE panes, W still 19:35
	} {
		panes = append(panes, m.Apply(e)...)
	}
	want := []window.Pane{
		mpane("sesiones_cliente", "C-P-1", "17:10", 30*time.Minute, 0, window.TimingLate, "27.5", 1, 4, "19:35", "19:49"),
		mpane(pais, "FR", "17:00", time.Hour, 0, window.TimingLate, "27.5", 1, 4, "19:35", "19:49"),
		mpane(sku, "MOCH-40L-AZ", "16:45", time.Hour, 0, window.TimingLate, "22.5", 1, 3, "19:35", "19:49"),
		mpane(sku, "MOCH-40L-AZ", "17:00", time.Hour, 0, window.TimingLate, "22.5", 1, 3, "19:35", "19:49"),
	}
	windowtest.SortPanes(panes)
	if diff := cmp.Diff(want, panes); diff != "" {
		t.Errorf("panes (-want +got):\n%s", diff)
	}
	wantDrops := []windowtest.Drop{
		{PedidoID: "P-1", WindowStart: utc("16:15"), Watermark: utc("19:35"), ReceivedAt: utc("19:47")},
		{PedidoID: "P-1", WindowStart: utc("16:30"), Watermark: utc("19:35"), ReceivedAt: utc("19:47")},
	}
	if diff := cmp.Diff(wantDrops, m.Drops(sku)); diff != "" {
		t.Errorf("%s drops (-want +got):\n%s", sku, diff)
	}
	if d := m.Drops(pais); len(d) != 0 {
		t.Errorf("%s drops %+v, want none", pais, d)
	}
	fates := m.Fates(sku)
	for start, want := range map[string]windowtest.Fate{
		"16:15": windowtest.Dropped, "16:30": windowtest.Dropped, "16:45": windowtest.Accepted, "17:00": windowtest.Accepted,
	} {
		if got := fates[windowtest.OrderWindow{PedidoID: "P-1", WindowStart: utc(start)}]; got != want {
			t.Errorf("P-1 in window %s is %q, want %q", start, got, want)
		}
	}
	if diff := cmp.Diff([]windowtest.SKUMissing{{Aggregation: sku, PedidoID: "P-1", Line: 1, ReceivedAt: utc("19:47")}},
		m.SKUMissing()); diff != "" {
		t.Errorf("sku_missing (-want +got):\n%s", diff)
	}
	for _, name := range []string{"sesiones_cliente", pais, sku} {
		if err := m.CheckPanes(name, m.Panes(name)); err != nil {
			t.Errorf("the model's own panes: %v", err)
		}
		if err := m.CheckDrops(name, m.Drops(name)); err != nil {
			t.Errorf("the model's own drops: %v", err)
		}
	}
}

// Keys from lines and order fields, and a watermark per aggregation.
func TestMultiKeysAndWatermarks(t *testing.T) {
	byPais := window.Defaults()
	byClient := window.Defaults()
	byClient.Name, byClient.KeyField = "ventas_cliente", windowtest.KeyClienteID
	bySKU := window.Defaults()
	bySKU.Name, bySKU.KeyField, bySKU.Period = "ventas_sku", windowtest.KeySKU, 30*time.Minute
	bySKU.OutOfOrderness = 0 // its own D: its watermark differs from the others'
	m := windowtest.NewMulti(byPais, byClient, bySKU)
	for _, e := range []windowtest.MultiEvent{
		// Two lines of one SKU (written differently) add up and count once.
		deliver("17:40", "m1", "P-1", "ES", "17:35", "100.00",
			line("MOCH-40L-AZ", 1, "45.125"), line("\tmoch-40L-az", 2, "10"), line("BOTA-TREK-42", 1, "9.875")),
		// No line with a SKU: counts by pais and client, in no SKU cell, and
		// does not move the SKU aggregation's watermark.
		deliver("17:50", "m2", "P-2", "ES", "17:49", "7", line("", 1, "7")),
		deliver("17:51", "m3", "P-3", "PT", "17:20", "0"), // no lines at all
		tickAt("17:52"),
	} {
		m.Apply(e)
	}
	// By pais and client: M = 17:49, last accepted 17:51, W = 17:49 - 10 min.
	// By SKU only P-1 counts: last accepted 17:40, idle at 17:52 (I = 5 min)
	// although P-2 and P-3 arrived since, so W = now - D with its D = 0.
	wantWM := map[string]string{"ventas_hora_pais": "17:39", "ventas_cliente": "17:39", "ventas_sku": "17:52"}
	for name, wm := range wantWM {
		if got := m.Watermark(name); !got.Equal(utc(wm)) {
			t.Errorf("%s watermark %s, want %s", name, got.Format("15:04"), wm)
		}
	}
	h, h2 := window.Window{Start: utc("17:00"), End: utc("18:00")}, window.Window{Start: utc("17:30"), End: utc("18:30")}
	ms := func(importe string, pedidos, unidades int64) window.Measures {
		return window.Measures{Importe: money(importe), Pedidos: pedidos, Unidades: unidades}
	}
	wantFinal := map[string]map[window.WindowKey]window.Measures{
		"ventas_hora_pais": {{Window: h, Key: "ES"}: ms("107", 2, 5), {Window: h, Key: "PT"}: ms("0", 1, 0)},
		"ventas_cliente": {
			{Window: h, Key: "C-P-1"}: ms("100", 1, 4), {Window: h, Key: "C-P-2"}: ms("7", 1, 1), {Window: h, Key: "C-P-3"}: ms("0", 1, 0),
		},
		"ventas_sku": { // 17:35 is in the windows starting 17:00 and 17:30
			{Window: h, Key: "MOCH-40L-AZ"}: ms("65.125", 1, 3), {Window: h, Key: "BOTA-TREK-42"}: ms("9.875", 1, 1),
			{Window: h2, Key: "MOCH-40L-AZ"}: ms("65.125", 1, 3), {Window: h2, Key: "BOTA-TREK-42"}: ms("9.875", 1, 1),
		},
	}
	for name, want := range wantFinal {
		if diff := cmp.Diff(want, m.Final(name)); diff != "" {
			t.Errorf("%s final (-want +got):\n%s", name, diff)
		}
	}
	if f := m.Fates("ventas_sku"); len(f) != 2 {
		t.Errorf("ventas_sku fates %v, want P-1's two windows only", f)
	}
	if diff := cmp.Diff([]windowtest.SKUMissing{{Aggregation: "ventas_sku", PedidoID: "P-2", Line: 0, ReceivedAt: utc("17:50")}},
		m.SKUMissing()); diff != "" {
		t.Errorf("sku_missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"P-1", "P-2", "P-3"}, m.Orders()); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
}

func TestModelsRefuseBadInput(t *testing.T) {
	other := window.Defaults()
	other.KeyField = "pedido_id"
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{name: "no aggregation", f: func() { windowtest.NewMulti() }, want: "no aggregation"},
		{name: "two with one name", f: func() { windowtest.NewMulti(window.Defaults(), window.Defaults()) }, want: "two aggregations named"},
		{name: "unknown key", f: func() { windowtest.NewMulti(other) }, want: `key "pedido_id"`},
		{name: "invalid spec", f: func() { windowtest.NewMulti(window.Spec{}) }, want: "must be"},
		{name: "events going back in time", want: "after one at", f: func() {
			m := windowtest.NewMulti(window.Defaults())
			m.Apply(windowtest.MultiEvent{Kind: windowtest.Tick, Now: utc("18:00")})
			m.Apply(windowtest.MultiEvent{Kind: windowtest.Tick, Now: utc("17:00")})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tt.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tt.want)
				}
			}()
			tt.f()
		})
	}
}

func TestMultiStreamShape(t *testing.T) {
	specs := windowtest.ShippedSpecs()
	gen := func(seed uint64) []windowtest.MultiEvent {
		return windowtest.MultiStream(rand.New(rand.NewPCG(seed, 1)), specs, windowtest.StreamConfig{Events: 2000})
	}
	events := gen(3)
	if diff := cmp.Diff(events, gen(3)); diff != "" {
		t.Fatalf("same seed, different streams (-a +b):\n%s", diff)
	}
	if cmp.Equal(events, gen(4)) {
		t.Errorf("different seeds gave the same stream")
	}
	counts := map[string]int{}
	for i, e := range events {
		if i > 0 && e.Now.Before(events[i-1].Now) {
			t.Fatalf("event %d goes back in time", i)
		}
		if e.Kind != windowtest.Deliver || e.Invalid != "" {
			continue
		}
		o := e.Order
		var sum numeric.Dec
		skus := map[string]bool{}
		for _, l := range o.Lineas {
			if l.Cantidad < 1 || l.PrecioUnitario.Sign() <= 0 {
				t.Fatalf("event %d: implausible line %+v", i, l)
			}
			a, _ := l.PrecioUnitario.MulInt(l.Cantidad)
			sum, _ = sum.Add(a)
			n := strings.ToUpper(strings.TrimSpace(l.SKU))
			counts["line without a SKU"] += btoi(n == "")
			counts["SKU to normalise"] += btoi(n != "" && n != l.SKU)
			counts["two lines of one SKU"] += btoi(n != "" && skus[n])
			skus[n] = true
		}
		counts["no lines"] += btoi(len(o.Lineas) == 0)
		counts["importe_total besides the lines"] += btoi(len(o.Lineas) > 0 && sum != o.ImporteTotal)
		counts["on a period boundary"] += btoi(o.EventTime.Equal(o.EventTime.Truncate(15 * time.Minute)))
	}
	for _, k := range []string{"line without a SKU", "SKU to normalise", "two lines of one SKU", "no lines",
		"importe_total besides the lines", "on a period boundary"} {
		if counts[k] == 0 {
			t.Errorf("no %s in 2000 events: %v", k, counts)
		}
	}
	if last := events[len(events)-1]; last.Kind != windowtest.Tick {
		t.Errorf("the stream does not end with a closing tick")
	}
}

// TestMultiChecksDetectViolations proves the per-aggregation checks can fail.
func TestMultiChecksDetectViolations(t *testing.T) {
	specs := windowtest.ShippedSpecs()
	m := windowtest.NewMulti(specs...)
	for _, e := range windowtest.MultiStream(rand.New(rand.NewPCG(5, 6)), specs, windowtest.StreamConfig{Events: 400}) {
		m.Apply(e)
	}
	const sku = "ventas_sku_hora_movil"
	drops, fates := m.Drops(sku), m.Fates(sku)
	if len(drops) < 2 || len(m.Panes(sku)) < 10 {
		t.Fatalf("the stream is too dull: %d drops, %d panes", len(drops), len(m.Panes(sku)))
	}
	if err := m.CheckDrops(sku, append(drops, drops[0])); err != nil {
		t.Errorf("correct drops (one rewritten) rejected: %v", err)
	}
	if err := m.CheckFates(sku, fates); err != nil {
		t.Errorf("correct fates rejected: %v", err)
	}
	if err := m.CheckPanes(sku, m.Panes(sku)); err != nil {
		t.Errorf("correct panes rejected: %v", err)
	}
	d0 := drops[0]
	flipped, ghost := m.Fates(sku), m.Fates(sku)
	for k, v := range flipped {
		if v == windowtest.Dropped {
			flipped[k] = windowtest.Accepted
			break
		}
	}
	ghost[windowtest.OrderWindow{PedidoID: "P-ghost", WindowStart: utc("17:00")}] = windowtest.Accepted
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a dropped window missing", m.CheckDrops(sku, drops[1:]), "was not dropped from window"},
		{"a drop of another window", m.CheckDrops(sku, append(drops[:1:1], windowtest.Drop{
			PedidoID: d0.PedidoID, WindowStart: d0.WindowStart.Add(-15 * time.Minute), Watermark: d0.Watermark})), "; the model never saw it"},
		{"a drop before end + L", m.CheckDrops(sku, append([]windowtest.Drop{{
			PedidoID: d0.PedidoID, WindowStart: d0.WindowStart, Watermark: d0.WindowStart}}, drops[1:]...)), "before end + L"},
		{"another aggregation's panes", m.CheckPanes(sku, m.Panes("ventas_hora_pais")), "no accepted order"},
		{"a fate flipped", m.CheckFates(sku, flipped), `want "dropped"`},
		{"a fate for a window the order is not in", m.CheckFates(sku, ghost), "holds no element"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
				t.Errorf("check = %v, want a problem mentioning %q", tt.err, tt.want)
			}
		})
	}
}

// A session's start moves when an earlier order joins it: the identity it
// had gets its MERGED pane (zero in ACCUMULATING, merged_into the new
// start) and the session goes on under the new start from pane_index 0.
// CheckPanes holds the identities to EARLY* ON_TIME? LATE* MERGED?.
func TestMultiSessionStartMoves(t *testing.T) {
	s := windowtest.SessionSpec()
	s.KeyField = windowtest.KeyPais
	m := windowtest.NewMulti(s)
	m.Apply(deliver("17:00", "m1", "P-1", "ES", "17:00", "10", line("A", 1, "10")))
	m.Apply(tickAt("17:02")) // W = 16:50
	m.Apply(deliver("17:03", "m2", "P-2", "ES", "16:45", "10", line("A", 1, "10")))
	m.Apply(tickAt("17:05"))
	end := utc("17:30")
	merged := mpane(s.Name, "ES", "17:00", 30*time.Minute, 1, window.TimingMerged, "0", 0, 0, "16:50", "17:05")
	merged.MergedInto = utc("16:45")
	moved := mpane(s.Name, "ES", "16:45", 0, 0, window.TimingEarly, "20", 2, 2, "16:50", "17:05")
	moved.WindowEnd = end
	want := []window.Pane{
		mpane(s.Name, "ES", "17:00", 30*time.Minute, 0, window.TimingEarly, "10", 1, 1, "16:50", "17:02"),
		merged, moved,
	}
	if diff := cmp.Diff(want, m.Panes(s.Name)); diff != "" {
		t.Fatalf("panes (-want +got):\n%s", diff)
	}
	if err := m.CheckPanes(s.Name, want); err != nil {
		t.Fatalf("CheckPanes of the model's panes: %v", err)
	}
	view, err := windowtest.View(want)
	if err != nil {
		t.Fatal(err)
	}
	wantView := map[window.WindowKey]window.Measures{
		{Window: window.Window{Start: utc("16:45"), End: end}, Key: "ES"}: {Importe: money("20"), Pedidos: 2, Unidades: 2},
	}
	if diff := cmp.Diff(wantView, view); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	afterMerged := want[0]
	afterMerged.Index, afterMerged.Timing = 2, window.TimingLate
	if err := m.CheckPanes(s.Name, append(want, afterMerged)); err == nil || !strings.Contains(err.Error(), "MERGED?") {
		t.Errorf("CheckPanes of a pane after MERGED = %v, want the order of timings refused", err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
