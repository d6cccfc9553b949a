package window_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The seed's stories happen on 2026-03-14 in Spain (UTC+1), so the hourly
// window "18:00" below is [17:00Z, 18:00Z).
var spain = time.FixedZone("CET", 3600)

func at(hhmmss string) time.Time {
	if len(hhmmss) == 5 {
		hhmmss += ":00"
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", "2026-03-14 "+hhmmss, spain)
	if err != nil {
		panic(err)
	}
	return t
}

type story struct {
	msg int
}

func (s *story) deliver(now, id, key, eventTime, importe string, unidades int64) windowtest.Event {
	s.msg++
	return windowtest.Event{Kind: windowtest.Deliver, Now: at(now), MessageID: fmt.Sprintf("m%d", s.msg),
		Order: window.Order{ID: id, Key: key, EventTime: at(eventTime),
			Measures: window.Measures{Importe: dec(importe), Pedidos: 1, Unidades: unidades}}}
}

func again(e windowtest.Event, now string) windowtest.Event { e.Now = at(now); return e }

func tick(now string) windowtest.Event { return windowtest.Event{Kind: windowtest.Tick, Now: at(now)} }

// sp builds an expected pane of window "hh:mm" (local) with key key.
func sp(win, key string, index int64, timing window.Timing, mode window.Accumulation,
	importe string, pedidos, unidades int64, wm, emitted string) window.Pane {
	start := at(win).UTC()
	return window.Pane{Aggregation: "ventas_hora_pais", Key: key,
		WindowStart: start, WindowEnd: start.Add(time.Hour), Index: index, Timing: timing, Accumulation: mode,
		Measures: ms(importe, pedidos, unidades), Watermark: at(wm).UTC(), EmittedAt: at(emitted).UTC()}
}

const (
	early  = window.TimingEarly
	onTime = window.TimingOnTime
	late   = window.TimingLate
	acc    = window.Accumulating
	dis    = window.Discarding
)

func TestSeedScenarios(t *testing.T) {
	s := &story{}
	metroP2 := s.deliver("18:51", "P-2", "ES", "18:42", "179.80", 2)
	lateStory := func() []windowtest.Event {
		return []windowtest.Event{
			s.deliver("18:30", "P-1", "ES", "18:25", "100", 1),
			tick("18:31"), // W = 18:15
			tick("20:40"), // idle all evening: W = 20:30, 90 minutes past the 19:00 end
			s.deliver("20:41", "P-2", "ES", "18:50", "50", 2),
			tick("21:15"), // idle: W = 21:05 >= 19:00 + 2 h: the window expires
			s.deliver("21:16", "P-3", "ES", "18:55", "30", 1),
		}
	}
	p1 := s.deliver("18:40", "P-1", "ES", "18:39", "100", 1)
	p1republished := p1
	p1republished.MessageID, p1republished.Now = "m-republish", at("18:45")

	tests := []struct {
		name      string
		file      string // golden log in testdata/seeds/
		change    func(*window.Spec)
		events    []windowtest.Event
		wantPanes []window.Pane
		wantDrops []windowtest.Drop
		wantW     time.Time
	}{
		{
			name: "metro: made at 18:42, arrives at 18:51, counts in 18:00-19:00",
			file: "metro",
			events: []windowtest.Event{
				s.deliver("18:40", "P-1", "ES", "18:39:30", "100", 1),
				tick("18:41"), // W = 18:29:30; first change 60 s old: EARLY
				metroP2,
				again(metroP2, "18:51:30"), // Pub/Sub redelivery: counted once
				tick("18:52"),              // W = 18:32
				s.deliver("19:05", "P-3", "ES", "19:04", "20", 1),
				tick("19:12"), // idle for 7 min: W = now - D = 19:02 >= 19:00
			},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:29:30", "18:41"),
				sp("18:00", "ES", 1, early, acc, "279.8", 2, 3, "18:32", "18:52"),
				sp("18:00", "ES", 2, onTime, acc, "279.8", 2, 3, "19:02", "19:12"),
				sp("19:00", "ES", 0, early, acc, "20", 1, 1, "19:02", "19:12"),
			},
			wantW: at("19:02"),
		},
		{
			name:   "90 minutes late within 2 h: LATE correction with the order; beyond: dropped",
			file:   "late-and-too-late",
			events: lateStory(),
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				sp("18:00", "ES", 2, late, acc, "150", 2, 3, "20:30", "20:41"),
			},
			wantDrops: []windowtest.Drop{{PedidoID: "P-3", WindowStart: at("18:00").UTC(), Watermark: at("21:05").UTC(), ReceivedAt: at("21:16").UTC()}},
			wantW:     at("21:05"),
		},
		{
			name:   "the same story discarding: panes carry changes",
			file:   "late-and-too-late-discarding",
			change: discarding,
			events: lateStory(),
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, dis, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, dis, "0", 0, 0, "20:30", "20:40"),
				sp("18:00", "ES", 2, late, dis, "50", 1, 2, "20:30", "20:41"),
			},
			wantDrops: []windowtest.Drop{{PedidoID: "P-3", WindowStart: at("18:00").UTC(), Watermark: at("21:05").UTC(), ReceivedAt: at("21:16").UTC()}},
			wantW:     at("21:05"),
		},
		{
			name:   "late delay 3 min: late changes wait for a tick; expiry flushes the rest",
			file:   "late-delay",
			change: lateDelay(3 * time.Minute),
			events: []windowtest.Event{
				s.deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				tick("18:31"),
				tick("20:40"),
				s.deliver("20:41", "P-2", "ES", "18:50", "50", 2), // late: no pane yet
				tick("20:43"), // 2 min: not yet; not idle, W stays 20:30
				tick("20:44"), // 3 min: LATE
				s.deliver("20:45", "P-4", "ES", "18:58", "10", 1),
				tick("21:15"), // idle: W = 21:05: expiry emits P-4 as the final LATE pane
			},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				sp("18:00", "ES", 2, late, acc, "150", 2, 3, "20:30", "20:44"),
				sp("18:00", "ES", 3, late, acc, "160", 3, 4, "21:05", "21:15"),
			},
			wantW: at("21:05"),
		},
		{
			name: "a window whose first order is late never gets ON_TIME",
			file: "only-late",
			events: []windowtest.Event{
				s.deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				tick("18:31"),
				tick("20:40"),
				s.deliver("20:41", "P-2", "FR", "18:50", "70", 1),
			},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				sp("18:00", "FR", 0, late, acc, "70", 1, 1, "20:30", "20:41"),
			},
			wantW: at("20:30"),
		},
		{
			name: "redelivery and republish count once and do not end idleness",
			file: "duplicates",
			events: []windowtest.Event{
				p1,
				again(p1, "18:40:05"),
				p1republished,
				tick("18:46"),      // last accepted 18:40, 6 min ago: idle, W = 18:36
				tick("19:20"),      // W = 19:10
				again(p1, "19:21"), // a redelivery after the window closed: not a late order
				again(p1republished, "19:22"),
			},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:36", "18:46"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "19:10", "19:20"),
			},
			wantW: at("19:10"),
		},
		{
			name: "no order yet: W stays at minus infinity, so a backlog is not dropped",
			file: "no-order-yet",
			events: []windowtest.Event{
				tick("18:00"),
				tick("20:00"),
				s.deliver("20:01", "P-1", "ES", "16:30", "5", 1), // 3.5 h old, first ever
				tick("20:02"), // W = 16:20
				tick("20:10"), // idle: W = 20:00: ON_TIME and, past 17:00 + 2 h, expired
			},
			wantPanes: []window.Pane{
				sp("16:00", "ES", 0, early, acc, "5", 1, 1, "16:20", "20:02"),
				sp("16:00", "ES", 1, onTime, acc, "5", 1, 1, "20:00", "20:10"),
			},
			wantW: at("20:00"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := window.Defaults()
			if tt.change != nil {
				tt.change(&spec)
			}
			drv := newDriver(spec)
			model := windowtest.NewModel(spec)
			var log strings.Builder
			for i, e := range tt.events {
				model.Apply(e)
				before := drv.snapshot()
				wmBefore := drv.ws.Watermark
				panes, err := drv.apply(e)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				logEvent(&log, spec, e, wmBefore, before, drv, panes)
			}
			got := drv.panes
			windowtest.SortPanes(got)
			if diff := cmp.Diff(tt.wantPanes, got); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDrops, drv.drops); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
			if !drv.ws.Watermark.Equal(tt.wantW) {
				t.Errorf("W = %s, want %s", drv.ws.Watermark.In(spain), tt.wantW)
			}
			modelPanes := model.Panes()
			windowtest.SortPanes(modelPanes)
			if diff := cmp.Diff(tt.wantPanes, modelPanes); diff != "" {
				t.Errorf("the reference model disagrees with the story (-want +model):\n%s", diff)
			}
			if err := model.CheckPanes(got); err != nil {
				t.Errorf("invariants: %v", err)
			}
			golden(t, filepath.Join("testdata", "seeds", tt.file+".golden"), log.String())
		})
	}
}

// logEvent renders one step of a story for people: what happened to the
// message or the watermark, and the panes it emitted.
func logEvent(b *strings.Builder, spec window.Spec, e windowtest.Event, wmBefore time.Time, before snapshot, d *driver, panes []window.Pane) {
	clock := func(t time.Time) string {
		if t.IsZero() {
			return "-inf"
		}
		return t.In(spain).Format("15:04:05")
	}
	switch e.Kind {
	case windowtest.Tick:
		fmt.Fprintf(b, "%s tick           W %s -> %s\n", clock(e.Now), clock(wmBefore), clock(d.ws.Watermark))
	case windowtest.Deliver:
		o := e.Order
		w := spec.WindowOf(o.EventTime)
		fate := spec.Classify(w, wmBefore).String()
		switch {
		case before.Seen == len(d.seen):
			fate = "duplicate"
		case d.seen[o.ID] == windowtest.Dropped:
			fate = "dropped (too_late)"
		}
		fmt.Fprintf(b, "%s deliver %-4s %s %s made %s window %s: %s\n", clock(e.Now), e.MessageID, o.ID, o.Key,
			clock(o.EventTime), w.Start.In(spain).Format("15:04"), fate)
	}
	for _, p := range panes {
		fmt.Fprintf(b, "           pane %s %-7s importe=%s pedidos=%d unidades=%d W=%s\n",
			p.ID(), p.Timing, p.Measures.Importe, p.Measures.Pedidos, p.Measures.Unidades, clock(p.Watermark))
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
