package windowtest_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
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

func TestStreamIsReproducible(t *testing.T) {
	spec := window.Defaults()
	a := windowtest.Stream(rand.New(rand.NewPCG(7, 7)), spec, windowtest.StreamConfig{})
	b := windowtest.Stream(rand.New(rand.NewPCG(7, 7)), spec, windowtest.StreamConfig{})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different streams (-a +b):\n%s", diff)
	}
	c := windowtest.Stream(rand.New(rand.NewPCG(8, 7)), spec, windowtest.StreamConfig{})
	if cmp.Equal(a, c) {
		t.Errorf("different seeds gave the same stream")
	}
}

func TestStreamShape(t *testing.T) {
	spec := window.Defaults()
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	events := windowtest.Stream(rand.New(rand.NewPCG(3, 4)), spec,
		windowtest.StreamConfig{Start: start, Events: 2000, Keys: []string{"ES", "IT"}})
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
		case seenOrder[e.Order.ID]:
			counts["republish"]++
		case e.Order.EventTime.After(e.Now):
			counts["future"]++
		case e.Now.Sub(e.Order.EventTime) > spec.WindowSize+spec.AllowedLateness:
			counts["very late"]++
		default:
			counts["order"]++
		}
		if e.Kind == windowtest.Deliver && e.Invalid == "" {
			if e.Order.Key != "ES" && e.Order.Key != "IT" {
				t.Fatalf("event %d has key %q outside the configured keys", i, e.Order.Key)
			}
			if e.Order.Measures.Pedidos != 1 || e.Order.Measures.Unidades < 1 || e.Order.Measures.Importe.Sign() <= 0 {
				t.Fatalf("event %d has implausible measures %+v", i, e.Order.Measures)
			}
		}
		seenMsg[e.MessageID], seenOrder[e.Order.ID] = true, true
	}
	for _, k := range []string{"tick", "invalid", "redelivery", "republish", "future", "very late", "order"} {
		if counts[k] == 0 {
			t.Errorf("no %s in 2000 events: %v", k, counts)
		}
	}
	if last := events[len(events)-1]; last.Kind != windowtest.Tick || last.Now.Sub(events[len(events)-2].Now) < 24*time.Hour {
		t.Errorf("the stream does not end with a closing tick: %+v", last)
	}
	open := windowtest.Stream(rand.New(rand.NewPCG(3, 4)), spec, windowtest.StreamConfig{Start: start, Events: 2000,
		Keys: []string{"ES", "IT"}, Open: true})
	if len(open) != len(events)-1 {
		t.Errorf("open stream has %d events, want %d (no closing tick)", len(open), len(events)-1)
	}
}

// The model on a short story whose panes are worked out by hand: defaults
// (D 10 min, I 5 min, E 60 s, L 2 h, Ld 60 s), UTC.
func TestModelStory(t *testing.T) {
	spec := window.Defaults()
	m := windowtest.NewModel(spec)
	at := func(s string) time.Time { return time.Date(2026, 3, 14, hh(s), mm(s), 0, 0, time.UTC) }
	ord := func(id, evt string) window.Order {
		return window.Order{ID: id, Key: "ES", EventTime: at(evt),
			Measures: window.Measures{Importe: numeric.FromNanos(1_000_000_000), Pedidos: 1, Unidades: 1}}
	}
	steps := []windowtest.Event{
		{Kind: windowtest.Deliver, Now: at("17:51"), MessageID: "1", Order: ord("P-1", "17:42")},
		{Kind: windowtest.Tick, Now: at("17:52")},                                                // W 17:32, EARLY 0
		{Kind: windowtest.Tick, Now: at("18:20")},                                                // idle: W 18:10, ON_TIME 1
		{Kind: windowtest.Deliver, Now: at("18:21"), MessageID: "2", Order: ord("P-2", "17:10")}, // LATE 2
		{Kind: windowtest.Deliver, Now: at("18:22"), MessageID: "2", Order: ord("P-2", "17:10")}, // duplicate
		{Kind: windowtest.Deliver, Now: at("18:23"), MessageID: "3", Invalid: "invalid: bad JSON"},
		{Kind: windowtest.Tick, Now: at("20:30")},                                                // W 20:20: expired
		{Kind: windowtest.Deliver, Now: at("20:31"), MessageID: "4", Order: ord("P-3", "17:59")}, // too late
	}
	var timings []window.Timing
	for _, e := range steps {
		for _, p := range m.Apply(e) {
			timings = append(timings, p.Timing)
		}
	}
	if diff := cmp.Diff([]window.Timing{window.TimingEarly, window.TimingOnTime, window.TimingLate}, timings); diff != "" {
		t.Errorf("timings (-want +got):\n%s", diff)
	}
	wantFates := map[string]windowtest.Fate{"P-1": windowtest.Accepted, "P-2": windowtest.Accepted, "P-3": windowtest.Dropped}
	if diff := cmp.Diff(wantFates, m.Fates()); diff != "" {
		t.Errorf("fates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3"}, m.InvalidMessages()); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	wantDrops := []windowtest.Drop{{PedidoID: "P-3", WindowStart: at("17:00"), Watermark: at("20:20"), ReceivedAt: at("20:31")}}
	if diff := cmp.Diff(wantDrops, m.Drops()); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	if !m.Watermark().Equal(at("20:20")) || !m.Settled() {
		t.Errorf("W = %s settled = %v, want 20:20 and settled", m.Watermark(), m.Settled())
	}
	wk := window.WindowKey{Window: window.Window{Start: at("17:00"), End: at("18:00")}, Key: "ES"}
	want := map[window.WindowKey]window.Measures{wk: {Importe: numeric.FromNanos(2_000_000_000), Pedidos: 2, Unidades: 2}}
	if diff := cmp.Diff(want, m.Final()); diff != "" {
		t.Errorf("final (-want +got):\n%s", diff)
	}
	if err := m.CheckPanes(m.Panes()); err != nil {
		t.Errorf("the model's own panes: %v", err)
	}
}

func hh(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }
func mm(s string) int { return int(s[3]-'0')*10 + int(s[4]-'0') }

func TestModelRejectsTimeGoingBack(t *testing.T) {
	m := windowtest.NewModel(window.Defaults())
	m.Apply(windowtest.Event{Kind: windowtest.Tick, Now: time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)})
	defer func() {
		if recover() == nil {
			t.Errorf("Apply accepted an event earlier than the previous one")
		}
	}()
	m.Apply(windowtest.Event{Kind: windowtest.Tick, Now: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)})
}

func TestView(t *testing.T) {
	w := window.Window{Start: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)}
	mk := func(idx int64, mode window.Accumulation, pedidos int64) window.Pane {
		return window.Pane{Aggregation: "a", Key: "ES", WindowStart: w.Start, WindowEnd: w.End, Index: idx,
			Accumulation: mode, Measures: window.Measures{Importe: numeric.FromNanos(pedidos * 10), Pedidos: pedidos}}
	}
	wk := window.WindowKey{Window: w, Key: "ES"}
	tests := []struct {
		name  string
		panes []window.Pane
		want  map[window.WindowKey]window.Measures
	}{
		{name: "none", want: map[window.WindowKey]window.Measures{}},
		{name: "accumulating: the highest index, whatever the order",
			panes: []window.Pane{mk(2, window.Accumulating, 5), mk(0, window.Accumulating, 1), mk(1, window.Accumulating, 3)},
			want:  map[window.WindowKey]window.Measures{wk: {Importe: numeric.FromNanos(50), Pedidos: 5}}},
		{name: "discarding: the sum",
			panes: []window.Pane{mk(1, window.Discarding, 2), mk(0, window.Discarding, 1), mk(2, window.Discarding, 0)},
			want:  map[window.WindowKey]window.Measures{wk: {Importe: numeric.FromNanos(30), Pedidos: 3}}},
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
// model's own correct output in one way.
func TestChecksDetectViolations(t *testing.T) {
	spec := window.Defaults()
	spec.Accumulation = window.Discarding
	m := windowtest.NewModel(spec)
	for _, e := range windowtest.Stream(rand.New(rand.NewPCG(11, 12)), spec, windowtest.StreamConfig{Events: 300}) {
		m.Apply(e)
	}
	good := m.Panes()
	if len(good) < 10 || len(m.Drops()) == 0 {
		t.Fatalf("the stream is too dull to test the checks: %d panes, %d drops", len(good), len(m.Drops()))
	}
	if err := m.CheckPanes(good); err != nil {
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
		if onTime >= 0 && p.WindowKey() == good[onTime].WindowKey() && p.Index == good[onTime].Index-1 {
			before = i
		}
	}
	if onTime < 0 || before < 0 || good[before].Timing != window.TimingEarly {
		t.Fatalf("no EARLY pane followed by ON_TIME in the stream")
	}
	edit := func(f func(ps []window.Pane) []window.Pane) []window.Pane {
		ps := append([]window.Pane(nil), good...)
		return f(ps)
	}
	tests := []struct {
		name  string
		panes []window.Pane
		want  string
	}{
		{name: "a pane lost", want: "not contiguous",
			panes: edit(func(ps []window.Pane) []window.Pane { return append(ps[:before], ps[before+1:]...) })},
		{name: "last pane lost", want: "final value",
			panes: edit(func(ps []window.Pane) []window.Pane { return ps[:len(ps)-1] })},
		{name: "a pane rewritten with other content", want: "written twice",
			panes: edit(func(ps []window.Pane) []window.Pane {
				p := ps[0]
				p.Measures.Pedidos++
				return append(ps, p)
			})},
		{name: "ON_TIME turned EARLY after W reached the end", want: "EARLY at watermark",
			panes: edit(func(ps []window.Pane) []window.Pane { ps[onTime].Timing = window.TimingEarly; return ps })},
		{name: "ON_TIME turned LATE", want: "ON_TIME panes, want 1",
			panes: edit(func(ps []window.Pane) []window.Pane { ps[onTime].Timing = window.TimingLate; return ps })},
		{name: "EARLY turned ON_TIME", want: "ON_TIME at watermark",
			panes: edit(func(ps []window.Pane) []window.Pane { ps[before].Timing = window.TimingOnTime; return ps })},
		{name: "wrong mode", want: "mode ACCUMULATING",
			panes: edit(func(ps []window.Pane) []window.Pane { ps[0].Accumulation = window.Accumulating; return ps })},
		{name: "a pane for a window without orders", want: "no accepted order",
			panes: edit(func(ps []window.Pane) []window.Pane {
				p := ps[0]
				p.Key = "ZZ"
				return append(ps, p)
			})},
		{name: "no panes at all", want: "no pane, the model emitted", panes: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.CheckPanes(tt.panes)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckPanes = %v, want a problem mentioning %q", err, tt.want)
			}
		})
	}

	t.Run("identical rewrites are harmless", func(t *testing.T) {
		if err := m.CheckPanes(append(good, good...)); err != nil {
			t.Errorf("CheckPanes = %v", err)
		}
	})
	t.Run("drops", func(t *testing.T) {
		drops := m.Drops()
		if err := m.CheckDrops(append(drops, drops[0])); err != nil {
			t.Errorf("correct drops (one rewritten) rejected: %v", err)
		}
		if err := m.CheckDrops(drops[1:]); err == nil || !strings.Contains(err.Error(), "was not dropped") {
			t.Errorf("a missing drop: %v", err)
		}
		extra := append(drops, windowtest.Drop{PedidoID: "P-nope"})
		if err := m.CheckDrops(extra); err == nil || !strings.Contains(err.Error(), "never saw it") {
			t.Errorf("an extra drop: %v", err)
		}
		early := append([]windowtest.Drop(nil), drops...)
		early[0].Watermark = early[0].WindowStart
		if err := m.CheckDrops(early); err == nil || !strings.Contains(err.Error(), "before end + L") {
			t.Errorf("a drop before end + L: %v", err)
		}
	})
	t.Run("fates", func(t *testing.T) {
		fates := m.Fates()
		if err := m.CheckFates(fates); err != nil {
			t.Errorf("correct fates rejected: %v", err)
		}
		for id, f := range fates {
			if f == windowtest.Accepted {
				fates[id] = windowtest.Dropped
				break
			}
		}
		fates["P-ghost"] = windowtest.Accepted
		err := m.CheckFates(fates)
		if err == nil || !strings.Contains(err.Error(), `want "accepted"`) || !strings.Contains(err.Error(), "never delivered") {
			t.Errorf("wrong fates: %v", err)
		}
	})
}
