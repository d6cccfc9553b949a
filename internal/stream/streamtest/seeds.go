package streamtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// The seed's stories happen on 2026-03-14 in Spain (UTC+1), so the hourly
// window "18:00" is [17:00Z, 18:00Z).
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

type story struct{ msg int }

func (s *story) deliver(now, id, key, eventTime, importe string, unidades int64) windowtest.Event {
	s.msg++
	return windowtest.Event{Kind: windowtest.Deliver, Now: at(now), MessageID: fmt.Sprintf("m%d", s.msg),
		Order: window.Order{ID: id, Key: key, EventTime: at(eventTime),
			Measures: window.Measures{Importe: dec(importe), Pedidos: 1, Unidades: unidades}}}
}

func again(e windowtest.Event, now string) windowtest.Event { e.Now = at(now); return e }

func tick(now string) windowtest.Event { return windowtest.Event{Kind: windowtest.Tick, Now: at(now)} }

func dec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

// sp builds an expected pane of window "hh:mm" (local) with key key.
func sp(win, key string, index int64, timing window.Timing, mode window.Accumulation,
	importe string, pedidos, unidades int64, wm, emitted string) window.Pane {
	start := at(win).UTC()
	return window.Pane{Aggregation: "ventas_hora_pais", Key: key,
		WindowStart: start, WindowEnd: start.Add(time.Hour), Index: index, Timing: timing, Accumulation: mode,
		Measures:  window.Measures{Importe: dec(importe), Pedidos: pedidos, Unidades: unidades},
		Watermark: at(wm).UTC(), EmittedAt: at(emitted).UTC()}
}

const (
	early  = window.TimingEarly
	onTime = window.TimingOnTime
	late   = window.TimingLate
	acc    = window.Accumulating
	dis    = window.Discarding
)

type seedStory struct {
	name      string
	change    func(*window.Spec)
	events    []windowtest.Event
	wantFates []stream.Fate // per delivery, in order
	wantPanes []window.Pane
	wantDrops []windowtest.Drop
	wantW     time.Time
}

// seedStories are the specification's stories (the same as package window's
// seed tests), played through the processor and its store.
func seedStories() []seedStory {
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
	dropP3 := []windowtest.Drop{{PedidoID: "P-3", WindowStart: at("18:00").UTC(), Watermark: at("21:05").UTC(), ReceivedAt: at("21:16").UTC()}}
	const (
		A = stream.Accepted
		D = stream.Duplicate
		T = stream.TooLate
	)
	return []seedStory{
		{
			name: "metro: made at 18:42, arrives at 18:51, counts in 18:00-19:00",
			events: []windowtest.Event{
				s.deliver("18:40", "P-1", "ES", "18:39:30", "100", 1),
				tick("18:41"), // W = 18:29:30; first change 60 s old: EARLY
				metroP2,
				again(metroP2, "18:51:30"), // Pub/Sub redelivery: counted once
				tick("18:52"),              // W = 18:32
				s.deliver("19:05", "P-3", "ES", "19:04", "20", 1),
				tick("19:12"), // idle for 7 min: W = now - D = 19:02 >= 19:00
			},
			wantFates: []stream.Fate{A, A, D, A},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:29:30", "18:41"),
				sp("18:00", "ES", 1, early, acc, "279.8", 2, 3, "18:32", "18:52"),
				sp("18:00", "ES", 2, onTime, acc, "279.8", 2, 3, "19:02", "19:12"),
				sp("19:00", "ES", 0, early, acc, "20", 1, 1, "19:02", "19:12"),
			},
			wantW: at("19:02"),
		},
		{
			name:      "90 minutes late within 2 h: LATE correction with the order; beyond: dropped",
			events:    lateStory(),
			wantFates: []stream.Fate{A, A, T},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				sp("18:00", "ES", 2, late, acc, "150", 2, 3, "20:30", "20:41"),
			},
			wantDrops: dropP3,
			wantW:     at("21:05"),
		},
		{
			name:      "the same story discarding: panes carry changes",
			change:    func(s *window.Spec) { s.Accumulation = window.Discarding },
			events:    lateStory(),
			wantFates: []stream.Fate{A, A, T},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, dis, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, dis, "0", 0, 0, "20:30", "20:40"),
				sp("18:00", "ES", 2, late, dis, "50", 1, 2, "20:30", "20:41"),
			},
			wantDrops: dropP3,
			wantW:     at("21:05"),
		},
		{
			name:   "late delay 3 min: late changes wait for a tick; expiry flushes the rest",
			change: func(s *window.Spec) { s.LateDelay = 3 * time.Minute },
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
			wantFates: []stream.Fate{A, A, A},
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
			events: []windowtest.Event{
				s.deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				tick("18:31"),
				tick("20:40"),
				s.deliver("20:41", "P-2", "FR", "18:50", "70", 1),
			},
			wantFates: []stream.Fate{A, A},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				sp("18:00", "FR", 0, late, acc, "70", 1, 1, "20:30", "20:41"),
			},
			wantW: at("20:30"),
		},
		{
			name: "redelivery and republish count once and do not end idleness",
			events: []windowtest.Event{
				p1,
				again(p1, "18:40:05"),
				p1republished,
				tick("18:46"),      // last accepted 18:40, 6 min ago: idle, W = 18:36
				tick("19:20"),      // W = 19:10
				again(p1, "19:21"), // a redelivery after the window closed: not a late order
				again(p1republished, "19:22"),
			},
			wantFates: []stream.Fate{A, D, D, D, D},
			wantPanes: []window.Pane{
				sp("18:00", "ES", 0, early, acc, "100", 1, 1, "18:36", "18:46"),
				sp("18:00", "ES", 1, onTime, acc, "100", 1, 1, "19:10", "19:20"),
			},
			wantW: at("19:10"),
		},
		{
			name: "no order yet: W stays at minus infinity, so a backlog is not dropped",
			events: []windowtest.Event{
				tick("18:00"),
				tick("20:00"),
				s.deliver("20:01", "P-1", "ES", "16:30", "5", 1), // 3.5 h old, first ever
				tick("20:02"), // W = 16:20
				tick("20:10"), // idle: W = 20:00: ON_TIME and, past 17:00 + 2 h, expired
			},
			wantFates: []stream.Fate{A},
			wantPanes: []window.Pane{
				sp("16:00", "ES", 0, early, acc, "5", 1, 1, "16:20", "20:02"),
				sp("16:00", "ES", 1, onTime, acc, "5", 1, 1, "20:00", "20:10"),
			},
			wantW: at("20:00"),
		},
	}
}

func testSeeds(t *testing.T, newStore func(t *testing.T) docstore.Store) {
	for _, tt := range seedStories() {
		t.Run(tt.name, func(t *testing.T) {
			spec := window.Defaults()
			if tt.change != nil {
				tt.change(&spec)
			}
			r := newRig(t, newStore, spec)
			model := windowtest.NewModel(spec)
			var fates []stream.Fate
			var w time.Time
			for i, e := range tt.events {
				model.Apply(e)
				switch e.Kind {
				case windowtest.Deliver:
					res, err := r.p.Handle(t.Context(), Delivery(e), e.Now)
					if err != nil {
						t.Fatalf("event %d: Handle: %v", i, err)
					}
					fates = append(fates, res.Fate())
				case windowtest.Tick:
					res, err := r.p.Tick(t.Context(), e.Now)
					if err != nil {
						t.Fatalf("event %d: Tick: %v", i, err)
					}
					w = res.Aggregations[0].Watermark
				}
			}
			if diff := cmp.Diff(tt.wantFates, fates); diff != "" {
				t.Errorf("fates (-want +got):\n%s", diff)
			}
			got := r.panes(spec.KeyField)
			windowtest.SortPanes(got)
			if diff := cmp.Diff(tt.wantPanes, got); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			drops, err := r.sink.Drops(spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantDrops, drops); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
			if !w.Equal(tt.wantW) {
				t.Errorf("W = %s, want %s", w.In(spain), tt.wantW)
			}
			if err := model.CheckPanes(got); err != nil {
				t.Errorf("invariants: %v", err)
			}
			if n := r.outbox(); n != 0 {
				t.Errorf("%d rows left in the outbox", n)
			}
			r.noConflicts()
		})
	}
}
