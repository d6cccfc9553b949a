package windowtest

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// Spain is the seed stories' zone: their window "18:00" is [17:00Z, 18:00Z).
var Spain = time.FixedZone("CET", 3600)

// At is the instant hh:mm or hh:mm:ss on 2026-03-14 in Spain.
func At(hhmmss string) time.Time {
	if len(hhmmss) == 5 {
		hhmmss += ":00"
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", "2026-03-14 "+hhmmss, Spain)
	if err != nil {
		panic(err)
	}
	return t
}

// Story numbers the messages of hand-written deliveries m1, m2, ...
type Story struct{ msg int }

// Deliver is the delivery at now of order id of key made at eventTime.
func (s *Story) Deliver(now, id, key, eventTime, importe string, unidades int64) MultiEvent {
	s.msg++
	m := window.Measures{Importe: Dec(importe), Pedidos: 1, Unidades: unidades}
	return MultiEvent{Kind: Deliver, Now: At(now), MessageID: fmt.Sprintf("m%d", s.msg), Order: SimpleOrder(id, key, At(eventTime), m)}
}

// Again is e delivered again at now (At): a Pub/Sub redelivery, same message id.
func Again(e MultiEvent, now string) MultiEvent { e.Now = At(now); return e }

// TickAt is a tick at now (At).
func TickAt(now string) MultiEvent { return MultiEvent{Kind: Tick, Now: At(now)} }

// Dec is the amount s, such as "179.80"; it panics on anything else.
func Dec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

// Seed is one of docs/event-time.md's stories with what every
// implementation must produce from it under window.Defaults() and Change.
type Seed struct {
	Name      string
	ID        string             // short and file-name safe, e.g. for golden files
	Change    func(*window.Spec) // nil: the defaults
	Events    []MultiEvent
	Panes     []window.Pane // every pane emitted, in SortPanes order
	Drops     []Drop        // too-late orders, in order of arrival
	Watermark time.Time     // W after the last event
}

// Seeds returns the seed stories, freshly built: callers may modify them.
func Seeds() []Seed {
	s := &Story{}
	metroP2 := s.Deliver("18:51", "P-2", "ES", "18:42", "179.80", 2)
	lateStory := func() []MultiEvent {
		return []MultiEvent{
			s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1),
			TickAt("18:31"), // W = 18:15
			TickAt("20:40"), // idle all evening: W = 20:30, 90 minutes past the 19:00 end
			s.Deliver("20:41", "P-2", "ES", "18:50", "50", 2),
			TickAt("20:42"), // the late change is Ld = 1 min old: LATE
			TickAt("21:15"), // idle: W = 21:05 >= 19:00 + 2 h: the window expires
			s.Deliver("21:16", "P-3", "ES", "18:55", "30", 1),
		}
	}
	p1 := s.Deliver("18:40", "P-1", "ES", "18:39", "100", 1)
	p1republished := p1
	p1republished.MessageID, p1republished.Now = "m-republish", At("18:45")
	dropP3 := func() []Drop {
		return []Drop{{PedidoID: "P-3", WindowStart: At("18:00").UTC(), Watermark: At("21:05").UTC(), ReceivedAt: At("21:16").UTC()}}
	}
	const (
		early  = window.TimingEarly
		onTime = window.TimingOnTime
		late   = window.TimingLate
		acc    = window.Accumulating
		dis    = window.Discarding
	)
	return []Seed{
		{
			Name: "metro: made at 18:42, arrives at 18:51, counts in 18:00-19:00",
			ID:   "metro",
			Events: []MultiEvent{
				s.Deliver("18:40", "P-1", "ES", "18:39:30", "100", 1),
				TickAt("18:41"), // W = 18:29:30; first change 60 s old: EARLY
				metroP2,
				Again(metroP2, "18:51:30"), // Pub/Sub redelivery: counted once
				TickAt("18:52"),            // W = 18:32
				s.Deliver("19:05", "P-3", "ES", "19:04", "20", 1),
				TickAt("19:12"), // idle for 7 min: W = now - D = 19:02 >= 19:00
			},
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, acc, "100", 1, 1, "18:29:30", "18:41"),
				pane("18:00", "ES", 1, early, acc, "279.8", 2, 3, "18:32", "18:52"),
				pane("18:00", "ES", 2, onTime, acc, "279.8", 2, 3, "19:02", "19:12"),
				pane("19:00", "ES", 0, early, acc, "20", 1, 1, "19:02", "19:12"),
			},
			Watermark: At("19:02"),
		},
		{
			Name:   "90 minutes late within 2 h: LATE correction at the next tick; beyond: dropped",
			ID:     "late-and-too-late",
			Events: lateStory(),
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				pane("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				pane("18:00", "ES", 2, late, acc, "150", 2, 3, "20:30", "20:42"),
			},
			Drops:     dropP3(),
			Watermark: At("21:05"),
		},
		{
			Name:   "the same story discarding: panes carry changes",
			ID:     "late-and-too-late-discarding",
			Change: func(s *window.Spec) { s.Accumulation = window.Discarding },
			Events: lateStory(),
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, dis, "100", 1, 1, "18:15", "18:31"),
				pane("18:00", "ES", 1, onTime, dis, "0", 0, 0, "20:30", "20:40"),
				pane("18:00", "ES", 2, late, dis, "50", 1, 2, "20:30", "20:42"),
			},
			Drops:     dropP3(),
			Watermark: At("21:05"),
		},
		{
			Name:   "late delay 3 min: late changes wait for a tick; expiry flushes the rest",
			ID:     "late-delay",
			Change: func(s *window.Spec) { s.LateDelay = 3 * time.Minute },
			Events: []MultiEvent{
				s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				TickAt("18:31"),
				TickAt("20:40"),
				s.Deliver("20:41", "P-2", "ES", "18:50", "50", 2), // late: no pane yet
				TickAt("20:43"), // 2 min: not yet; not idle, W stays 20:30
				TickAt("20:44"), // 3 min: LATE
				s.Deliver("20:45", "P-4", "ES", "18:58", "10", 1),
				TickAt("21:15"), // idle: W = 21:05: expiry emits P-4 as the final LATE pane
			},
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				pane("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				pane("18:00", "ES", 2, late, acc, "150", 2, 3, "20:30", "20:44"),
				pane("18:00", "ES", 3, late, acc, "160", 3, 4, "21:05", "21:15"),
			},
			Watermark: At("21:05"),
		},
		{
			Name: "a window whose first order is late never gets ON_TIME",
			ID:   "only-late",
			Events: []MultiEvent{
				s.Deliver("18:30", "P-1", "ES", "18:25", "100", 1),
				TickAt("18:31"),
				TickAt("20:40"),
				s.Deliver("20:41", "P-2", "FR", "18:50", "70", 1),
				TickAt("20:42"),
			},
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, acc, "100", 1, 1, "18:15", "18:31"),
				pane("18:00", "ES", 1, onTime, acc, "100", 1, 1, "20:30", "20:40"),
				pane("18:00", "FR", 0, late, acc, "70", 1, 1, "20:30", "20:42"),
			},
			Watermark: At("20:30"),
		},
		{
			Name: "redelivery and republish count once and do not end idleness",
			ID:   "duplicates",
			Events: []MultiEvent{
				p1,
				Again(p1, "18:40:05"),
				p1republished,
				TickAt("18:46"),    // last accepted 18:40, 6 min ago: idle, W = 18:36
				TickAt("19:20"),    // W = 19:10
				Again(p1, "19:21"), // a redelivery after the window closed: not a late order
				Again(p1republished, "19:22"),
			},
			Panes: []window.Pane{
				pane("18:00", "ES", 0, early, acc, "100", 1, 1, "18:36", "18:46"),
				pane("18:00", "ES", 1, onTime, acc, "100", 1, 1, "19:10", "19:20"),
			},
			Watermark: At("19:10"),
		},
		{
			Name: "no order yet: W stays at minus infinity, so a backlog is not dropped",
			ID:   "no-order-yet",
			Events: []MultiEvent{
				TickAt("18:00"),
				TickAt("20:00"),
				s.Deliver("20:01", "P-1", "ES", "16:30", "5", 1), // 3.5 h old, first ever
				TickAt("20:02"), // W = 16:20
				TickAt("20:10"), // idle: W = 20:00: ON_TIME and, past 17:00 + 2 h, expired
			},
			Panes: []window.Pane{
				pane("16:00", "ES", 0, early, acc, "5", 1, 1, "16:20", "20:02"),
				pane("16:00", "ES", 1, onTime, acc, "5", 1, 1, "20:00", "20:10"),
			},
			Watermark: At("20:00"),
		},
	}
}

// pane is an expected pane of ventas_hora_pais of the window starting at win.
func pane(win, key string, index int64, timing window.Timing, mode window.Accumulation,
	importe string, pedidos, unidades int64, wm, emitted string) window.Pane {
	start := At(win).UTC()
	return window.Pane{Aggregation: "ventas_hora_pais", Key: key,
		WindowStart: start, WindowEnd: start.Add(time.Hour), Index: index, Timing: timing, Accumulation: mode,
		Measures:  window.Measures{Importe: Dec(importe), Pedidos: pedidos, Unidades: unidades},
		Watermark: At(wm).UTC(), EmittedAt: At(emitted).UTC()}
}
