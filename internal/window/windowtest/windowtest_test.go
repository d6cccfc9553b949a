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

// TestStreamShape: a seed gives one stream, another seed another; time
// never goes back; the stream closes with a tick a day later; and it holds
// every case it exists for (count names them, failing on an impossible event).
func TestStreamShape(t *testing.T) {
	spec := window.Defaults()
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	cfg := windowtest.StreamConfig{Start: start, Events: 2000, Keys: []string{"ES", "IT"}}
	seenMsg, seenOrder := map[string]bool{}, map[string]bool{}
	tests := []struct {
		name  string
		gen   func(seed uint64, cfg windowtest.StreamConfig) []windowtest.MultiEvent
		count func(t *testing.T, e windowtest.MultiEvent, counts map[string]int)
		want  []string
	}{{
		name: "Stream",
		gen: func(seed uint64, cfg windowtest.StreamConfig) []windowtest.MultiEvent {
			return windowtest.Stream(rand.New(rand.NewPCG(seed, 4)), spec, cfg)
		},
		count: func(t *testing.T, e windowtest.MultiEvent, counts map[string]int) {
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
			seenMsg[e.MessageID], seenOrder[e.Order.PedidoID] = true, true
			o := e.Order
			if e.Kind == windowtest.Deliver && e.Invalid == "" && (o.Pais != "ES" && o.Pais != "IT" ||
				len(o.Lineas) != 1 || o.Lineas[0].Cantidad < 1 || o.ImporteTotal.Sign() <= 0) {
				t.Fatalf("an implausible order, or one of a key outside ES, IT: %+v", o)
			}
		},
		want: []string{"tick", "invalid", "redelivery", "republish", "future", "very late", "order"},
	}, {
		name: "MultiStream",
		gen: func(seed uint64, cfg windowtest.StreamConfig) []windowtest.MultiEvent {
			return windowtest.MultiStream(rand.New(rand.NewPCG(seed, 1)), windowtest.ShippedSpecs(), cfg)
		},
		count: func(t *testing.T, e windowtest.MultiEvent, counts map[string]int) {
			if e.Kind != windowtest.Deliver || e.Invalid != "" {
				return
			}
			o := e.Order
			var sum numeric.Dec
			skus := map[string]bool{}
			for _, l := range o.Lineas {
				if l.Cantidad < 1 || l.PrecioUnitario.Sign() <= 0 {
					t.Fatalf("implausible line %+v", l)
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
		},
		want: []string{"line without a SKU", "SKU to normalise", "two lines of one SKU", "no lines",
			"importe_total besides the lines", "on a period boundary"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := tt.gen(3, cfg)
			if diff := cmp.Diff(events, tt.gen(3, cfg)); diff != "" {
				t.Fatalf("same seed, different streams (-a +b):\n%s", diff)
			}
			if cmp.Equal(events, tt.gen(8, cfg)) {
				t.Errorf("different seeds gave the same stream")
			}
			counts := map[string]int{}
			for i, e := range events {
				if i > 0 && e.Now.Before(events[i-1].Now) {
					t.Fatalf("event %d at %s goes back from %s", i, e.Now, events[i-1].Now)
				}
				tt.count(t, e, counts)
			}
			for _, k := range tt.want {
				if counts[k] == 0 {
					t.Errorf("no %s in 2000 events: %v", k, counts)
				}
			}
			last, before := events[len(events)-1], events[len(events)-2]
			if last.Kind != windowtest.Tick || last.Now.Sub(before.Now) < 24*time.Hour {
				t.Errorf("the stream does not end with a closing tick: %+v", last)
			}
			open := cfg
			open.Open = true
			if open := tt.gen(3, open); len(open) != len(events)-1 {
				t.Errorf("open stream has %d events, want %d (no closing tick)", len(open), len(events)-1)
			}
		})
	}
}

// TestChecksDetectViolations proves the checks can fail: each row breaks a
// model's own correct output (or a watermark) in one way, on one discarding
// aggregation or on the shipped three.
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
	panes := func(ps []window.Pane) error { return m.CheckPanes(spec.Name, ps) }
	timing := func(i int, tm window.Timing) []window.Pane {
		return with(i, func(p *window.Pane) { p.Timing = tm })
	}
	early := timing(onTime, window.TimingEarly)

	specs := windowtest.ShippedSpecs()
	mm := windowtest.NewMulti(specs...)
	cfg := windowtest.StreamConfig{Events: 400}
	for _, e := range windowtest.MultiStream(rand.New(rand.NewPCG(5, 6)), specs, cfg) {
		mm.Apply(e)
	}
	const sku = "ventas_sku_hora_movil"
	drops, fates := mm.Drops(sku), mm.Fates(sku)
	if len(drops) < 2 || len(mm.Panes(sku)) < 10 {
		t.Fatalf("the stream is too dull: %d drops, %d panes", len(drops), len(mm.Panes(sku)))
	}
	d0 := drops[0]
	flipped, ghost := mm.Fates(sku), mm.Fates(sku)
	for k, v := range flipped {
		if v == windowtest.Dropped {
			flipped[k] = windowtest.Accepted
			break
		}
	}
	ghost[windowtest.OrderWindow{PedidoID: "P-ghost", WindowStart: utc("17:00")}] = windowtest.Accepted
	// CheckWatermark of a tick at 18:00 from W = 17:00; D = 10 min.
	wm := func(got string) error {
		return windowtest.CheckWatermark(spec, utc("17:00"), utc(got), utc("18:00"))
	}

	tests := []struct {
		name string
		err  error
		want string // "": no problem
	}{
		{"correct panes", panes(good), ""},
		{"identical rewrites are harmless", panes(append(slices.Clone(good), good...)), ""},
		{"a pane lost", panes(slices.Delete(slices.Clone(good), before, before+1)), "not contiguous"},
		{"last pane lost", panes(good[:len(good)-1]), "final value"},
		{"a pane rewritten with other content", panes(extra(func(p *window.Pane) { p.Measures.Pedidos++ })),
			"written twice"},
		{"ON_TIME turned EARLY after W reached the end", panes(early), "EARLY at watermark"},
		{"ON_TIME turned LATE", panes(timing(onTime, window.TimingLate)), "ON_TIME panes, want 1"},
		{"EARLY turned ON_TIME", panes(timing(before, window.TimingOnTime)), "ON_TIME at watermark"},
		{"wrong mode", panes(with(0, func(p *window.Pane) { p.Accumulation = window.Accumulating })),
			"mode ACCUMULATING"},
		{"a pane for a window without orders", panes(extra(func(p *window.Pane) { p.Key = "ZZ" })), "no accepted order"},
		{"no panes at all", panes(nil), "no pane, the model emitted"},
		{"CheckSequences without the model: correct panes", windowtest.CheckSequences(spec, good), ""},
		{"CheckSequences without the model: ON_TIME turned EARLY", windowtest.CheckSequences(spec, early),
			"EARLY at watermark"},

		{"first watermark", windowtest.CheckWatermark(spec, time.Time{}, utc("17:00"), utc("18:00")), ""},
		{"watermark unchanged", wm("17:00"), ""},
		{"watermark exactly now - D", wm("17:50"), ""},
		{"watermark went back", wm("16:00"), "went back"},
		{"watermark ahead of now - D", wm("17:51"), "ahead of now - D"},

		{"correct drops, one rewritten", mm.CheckDrops(sku, append(drops, drops[0])), ""},
		{"correct fates", mm.CheckFates(sku, fates), ""},
		{"correct panes of several aggregations", mm.CheckPanes(sku, mm.Panes(sku)), ""},
		{"a dropped window missing", mm.CheckDrops(sku, drops[1:]), "was not dropped from window"},
		{"a drop of another window", mm.CheckDrops(sku, append(drops[:1:1], windowtest.Drop{PedidoID: d0.PedidoID,
			WindowStart: d0.WindowStart.Add(-15 * time.Minute), Watermark: d0.Watermark})), "; the model never saw it"},
		{"a drop before end + L", mm.CheckDrops(sku, append([]windowtest.Drop{{PedidoID: d0.PedidoID,
			WindowStart: d0.WindowStart, Watermark: d0.WindowStart}}, drops[1:]...)), "before end + L"},
		{"another aggregation's panes", mm.CheckPanes(sku, mm.Panes("ventas_hora_pais")), "no accepted order"},
		{"a fate flipped", mm.CheckFates(sku, flipped), `want "dropped"`},
		{"a fate for a window the order is not in", mm.CheckFates(sku, ghost), "holds no element"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.err != nil:
				t.Errorf("check = %v, want no problem", tt.err)
			case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
				t.Errorf("check = %v, want a problem mentioning %q", tt.err, tt.want)
			}
		})
	}
}

// utc is hh:mm on 2026-03-14 in UTC.
func utc(hhmm string) time.Time {
	t, err := time.Parse(time.DateTime, "2026-03-14 "+hhmm+":00")
	if err != nil {
		panic(err)
	}
	return t
}

var money = windowtest.Dec

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
