package window_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// The cell of these tables: window 17:00-18:00Z (18:00-19:00 in Spain), key
// ES. Defaults: E = 60 s, L = 2 h (expiry at W = 20:00Z), Ld = 60 s.
var (
	cellWK = window.WindowKey{
		Window: window.Window{Start: clk("17:00"), End: clk("18:00")},
		Key:    "ES",
	}
	total1 = ms("179.8", 1, 2)
	total2 = ms("269.7", 2, 3)
)

func pane(index int64, timing window.Timing, mode window.Accumulation, m window.Measures, wm, now string) *window.Pane {
	return &window.Pane{Aggregation: "ventas_hora_pais", Key: "ES", WindowStart: cellWK.Window.Start, WindowEnd: cellWK.Window.End,
		Index: index, Timing: timing, Accumulation: mode, Measures: m, Watermark: clk(wm), EmittedAt: clk(now)}
}

// content is a cell's combined partial sums, un-emitted since pending ("": none).
func content(total window.Measures, pending string, onTime bool) window.Partial {
	return window.Partial{Measures: total, PendingSince: clk(pending), OnTime: onTime}
}

func state(next int64, emitted window.Measures, onTime window.OnTimeStatus) window.PaneState {
	return window.PaneState{NextIndex: next, Emitted: emitted, OnTime: onTime}
}

func TestOnTick(t *testing.T) {
	const acc, dis = window.Accumulating, window.Discarding
	E, O, L := window.TimingEarly, window.TimingOnTime, window.TimingLate
	pending, done, never := window.OnTimePending, window.OnTimeDone, window.OnTimeNever
	afterEarly, afterOnTime := state(1, total1, pending), state(2, total1, done)
	discarding := func(s *window.Spec) { s.Accumulation = window.Discarding }
	tests := []struct {
		name    string
		change  func(*window.Spec)
		st      window.PaneState
		c       window.Partial
		wm, now string
		next    window.PaneState // zero: st unchanged
		pane    *window.Pane
		expired bool
		wantErr string // an ErrOverflow naming the pane
	}{
		// W < end: EARLY panes.
		{name: "nothing accepted", wm: "17:30", now: "17:41"},
		{name: "change younger than E waits", c: content(total1, "17:40:30", true), wm: "17:30", now: "17:41"},
		{name: "change exactly E old fires EARLY", c: content(total1, "17:40", true), wm: "17:30", now: "17:41",
			next: afterEarly, pane: pane(0, E, acc, total1, "17:30", "17:41")},
		{name: "EARLY with no watermark yet", c: content(total1, "17:40", true), now: "17:41",
			next: afterEarly, pane: pane(0, E, acc, total1, "", "17:41")},
		{name: "second EARLY, accumulating: totals so far", st: afterEarly, c: content(total2, "17:50", true),
			wm: "17:40", now: "17:52", next: state(2, total2, pending), pane: pane(1, E, acc, total2, "17:40", "17:52")},
		{name: "second EARLY, discarding: the change only", change: discarding, st: afterEarly, c: content(total2, "17:50", true),
			wm: "17:40", now: "17:52", next: state(2, total2, pending), pane: pane(1, E, dis, ms("89.9", 1, 1), "17:40", "17:52")},
		{name: "no change since the EARLY pane: nothing", st: afterEarly, c: content(total1, "", true), wm: "17:40", now: "17:52"},
		{name: "zero E fires at the first tick", change: func(s *window.Spec) { s.EarlyDelay = 0 }, c: content(total1, "17:41", true),
			wm: "17:30", now: "17:41", next: afterEarly, pane: pane(0, E, acc, total1, "17:30", "17:41")},

		// W reaches end: ON_TIME exactly once (FIRE_ALWAYS).
		{name: "ON_TIME for a window never emitted", c: content(total1, "18:09:50", true), wm: "18:00", now: "18:10",
			next: state(1, total1, done), pane: pane(0, O, acc, total1, "18:00", "18:10")},
		{name: "ON_TIME ignores E", change: func(s *window.Spec) { s.EarlyDelay = time.Hour }, c: content(total1, "18:09:59", true),
			wm: "18:00", now: "18:10", next: state(1, total1, done), pane: pane(0, O, acc, total1, "18:00", "18:10")},
		{name: "ON_TIME with nothing new since EARLY, accumulating: same totals", st: afterEarly, c: content(total1, "", true),
			wm: "18:01", now: "18:11", next: state(2, total1, done), pane: pane(1, O, acc, total1, "18:01", "18:11")},
		{name: "ON_TIME with nothing new since EARLY, discarding: an empty pane", change: discarding, st: afterEarly,
			c: content(total1, "", true), wm: "18:01", now: "18:11",
			next: state(2, total1, done), pane: pane(1, O, dis, window.Measures{}, "18:01", "18:11")},
		{name: "re-running the ON_TIME tick: nothing", st: state(2, total1, done), c: content(total1, "", true), wm: "18:01", now: "18:11"},
		{name: "W jumps past end + L: ON_TIME, then expired", st: afterEarly, c: content(total2, "17:59", true),
			wm: "23:50", now: "2026-03-15T00:00:00Z", next: state(2, total2, done), expired: true,
			pane: pane(1, O, acc, total2, "23:50", "2026-03-15T00:00:00Z")},
		{name: "no lateness: ON_TIME and expired at once", change: func(s *window.Spec) { s.AllowedLateness = 0 },
			c: content(total1, "17:59", true), wm: "18:00", now: "18:10",
			next: state(1, total1, done), pane: pane(0, O, acc, total1, "18:00", "18:10"), expired: true},

		// A window whose orders were all late never gets ON_TIME.
		{name: "only late orders, Ld not reached: NEVER, no pane", c: content(total1, "19:40:30", false),
			wm: "19:30", now: "19:41", next: state(0, window.Measures{}, never)},
		{name: "only late orders, Ld reached: LATE pane 0", st: state(0, window.Measures{}, never), c: content(total1, "19:40", false),
			wm: "19:30", now: "19:41", next: state(1, total1, never), pane: pane(0, L, acc, total1, "19:30", "19:41")},

		// After ON_TIME: LATE panes.
		{name: "late change, Ld not reached: nothing", st: afterOnTime, c: content(total2, "19:40:30", true), wm: "19:30", now: "19:41"},
		{name: "late change, Ld reached: LATE, discarding delta", change: discarding, st: afterOnTime, c: content(total2, "19:40", true),
			wm: "19:30", now: "19:41", next: state(3, total2, done), pane: pane(2, L, dis, ms("89.9", 1, 1), "19:30", "19:41")},
		{name: "no EARLY after ON_TIME even if W is passed in stale", change: func(s *window.Spec) { s.EarlyDelay = 0 },
			st: afterOnTime, c: content(total2, "19:40", true), wm: "17:30", now: "19:41",
			next: state(3, total2, done), pane: pane(2, L, acc, total2, "17:30", "19:41")},

		// Expiry.
		{name: "expiry flushes an undue late change as the final LATE pane", change: func(s *window.Spec) { s.LateDelay = time.Hour },
			st: afterOnTime, c: content(total2, "19:59", true), wm: "20:00", now: "20:10",
			next: state(3, total2, done), pane: pane(2, L, acc, total2, "20:00", "20:10"), expired: true},
		{name: "expiry with nothing pending: no pane", st: afterOnTime, c: content(total1, "", true), wm: "20:00", now: "20:10", expired: true},
		{name: "re-running the expiry tick: expired again, no pane", st: state(3, total2, done), c: content(total2, "", true),
			wm: "20:00", now: "20:10", expired: true},
		{name: "just before expiry", st: afterOnTime, c: content(total1, "", true), wm: "19:59:59.999999999", now: "20:10"},
		{name: "empty window expires without panes", wm: "20:00", now: "20:10", next: state(0, window.Measures{}, never), expired: true},
		{name: "a discarding delta out of range", change: discarding,
			st: window.PaneState{NextIndex: 1, Emitted: window.Measures{Importe: numeric.Min(), Pedidos: 1}},
			c:  window.Partial{Measures: window.Measures{Importe: numeric.Max(), Pedidos: 2}, OnTime: true},
			wm: "18:00", now: "18:10", wantErr: "pane ventas_hora_pais|2026-03-14T17:00:00Z|ES|1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			if tt.change != nil {
				tt.change(&s)
			}
			want := window.Outcome{State: tt.next, Pane: tt.pane, Expired: tt.expired}
			if tt.next == (window.PaneState{}) {
				want.State = tt.st
			}
			got, err := s.OnTick(cellWK, tt.st, tt.c, clk(tt.wm), clk(tt.now))
			if tt.wantErr != "" {
				if !errors.Is(err, window.ErrOverflow) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want ErrOverflow naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPaneID(t *testing.T) {
	tests := []struct {
		name, start, key string
		index            int64
		want             string
	}{
		{"plain", "2026-03-14T18:00:00+01:00", "ES", 0, "ventas_hora_pais|2026-03-14T17:00:00Z|ES|0"},
		{"key with separators is escaped", "17:00", "a|b/c d", 12, "ventas_hora_pais|2026-03-14T17:00:00Z|a%7Cb%2Fc%20d|12"},
		{"empty key", "1969-12-31T23:00:00Z", "", 3, "ventas_hora_pais|1969-12-31T23:00:00Z||3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := window.Pane{Aggregation: "ventas_hora_pais", WindowStart: clk(tt.start), Key: tt.key, Index: tt.index}
			if got := p.ID(); got != tt.want {
				t.Errorf("ID() = %q, want %q", got, tt.want)
			}
		})
	}
}

// sessionSpec: sessions of 30 min per cliente_id, E = Ld = 1 min, L = 1 h.
func sessionSpec(mode window.Accumulation) window.Spec {
	s := window.Defaults()
	s.Name, s.KeyField, s.WindowSize, s.Gap = "sesiones_cliente", "cliente_id", 0, 30*time.Minute
	s.AllowedLateness, s.Accumulation = time.Hour, mode
	return s
}

// sessionStep delivers an order of 10.00 and 1 unit of key C-1 at event
// time at (when id is set), or ticks; wm is the watermark the order is
// classified against or the tick advanced to.
type sessionStep struct {
	id, at  string
	wm, now string
}

func tickAt(wm, now string) sessionStep { return sessionStep{wm: wm, now: now} }
func sessionOrder(id, at, wm, now string) sessionStep {
	return sessionStep{id: id, at: at, wm: wm, now: now}
}

// sp is an expected pane of key C-1 holding n orders' worth (ACCUMULATING
// totals or a DISCARDING change, by the sign of n).
func sp(mode window.Accumulation, start, end string, index int64, timing window.Timing, n int64, wm, now string) window.Pane {
	return window.Pane{Aggregation: "sesiones_cliente", Key: "C-1", WindowStart: clk(start), WindowEnd: clk(end),
		Index: index, Timing: timing, Accumulation: mode, Watermark: clk(wm), EmittedAt: clk(now),
		Measures: window.Measures{Importe: dec(strconv.FormatInt(10*n, 10)), Pedidos: n, Unidades: n}}
}

func merged(p window.Pane, into string) window.Pane { p.MergedInto = clk(into); return p }

// TestSessionsHandWorked plays the specification's session stories
// (docs/event-time.md, "Session windows") through AcceptSession and
// OnTickSession, with the watermark given by hand.
func TestSessionsHandWorked(t *testing.T) {
	const (
		acc = window.Accumulating
		dis = window.Discarding
	)
	E, O, L, M := window.TimingEarly, window.TimingOnTime, window.TimingLate, window.TimingMerged
	// Two sessions, 10:00-10:30 and 10:40-11:10, each with an EARLY pane,
	// then an order at 10:25 that joins them.
	bridge := []sessionStep{
		sessionOrder("A", "10:00", "09:40", "10:01"),
		sessionOrder("B", "10:40", "09:45", "10:41"),
		tickAt("09:50", "10:45"),
		sessionOrder("C", "10:25", "09:50", "10:46"),
		tickAt("09:55", "10:48"),
	}
	tests := []struct {
		name      string
		mode      window.Accumulation
		steps     []sessionStep
		wantPanes []window.Pane
		wantDrops []string
		wantOpen  []window.Window
	}{
		{
			name: "two orders 20 min apart merge", mode: acc,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:50", "10:01"),
				sessionOrder("B", "10:20", "09:55", "10:21"),
				tickAt("10:00", "10:22"),
				tickAt("10:50", "11:00"),
				tickAt("11:50", "12:00"),
			},
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:50", 0, E, 2, "10:00", "10:22"),
				sp(acc, "10:00", "10:50", 1, O, 2, "10:50", "11:00"),
			},
		},
		{
			name: "a third order bridges two sessions", mode: acc, steps: append(bridge, tickAt("11:10", "11:20")),
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:30", 0, E, 1, "09:50", "10:45"),
				sp(acc, "10:40", "11:10", 0, E, 1, "09:50", "10:45"),
				merged(sp(acc, "10:40", "11:10", 1, M, 0, "09:55", "10:48"), "10:00"),
				sp(acc, "10:00", "11:10", 1, E, 3, "09:55", "10:48"),
				sp(acc, "10:00", "11:10", 2, O, 3, "11:10", "11:20"),
			},
			wantOpen: []window.Window{{Start: clk("10:00"), End: clk("11:10")}},
		},
		{
			name: "discarding: the merged identity takes back what it emitted", mode: dis, steps: bridge,
			wantPanes: []window.Pane{
				sp(dis, "10:00", "10:30", 0, E, 1, "09:50", "10:45"),
				sp(dis, "10:40", "11:10", 0, E, 1, "09:50", "10:45"),
				merged(sp(dis, "10:40", "11:10", 1, M, -1, "09:55", "10:48"), "10:00"),
				sp(dis, "10:00", "11:10", 1, E, 2, "09:55", "10:48"),
			},
			wantOpen: []window.Window{{Start: clk("10:00"), End: clk("11:10")}},
		},
		{
			name: "a late order extends a session that had its ON_TIME pane", mode: acc,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:50", "10:01"),
				tickAt("10:30", "10:40"),
				sessionOrder("B", "10:25", "10:30", "10:41"), // end moves to 10:55, past W
				tickAt("10:31", "10:42"),
				tickAt("10:55", "11:05"),
				tickAt("11:55", "12:05"),
			},
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:30", 0, O, 1, "10:30", "10:40"),
				sp(acc, "10:00", "10:55", 1, L, 2, "10:31", "10:42"),
			},
		},
		{
			name: "too late for its proto-window though the session it touches is open", mode: acc,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:50", "10:01"),
				sessionOrder("B", "10:20", "09:55", "10:21"),
				tickAt("11:20", "11:30"),
				sessionOrder("C", "09:45", "11:20", "11:31"), // [09:45, 10:15) + L <= W; [10:00, 10:50) expires at 11:50
				sessionOrder("D", "10:40", "11:20", "11:32"),
				tickAt("11:21", "11:34"),
			},
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:50", 0, O, 2, "11:20", "11:30"),
				sp(acc, "10:00", "11:10", 1, L, 3, "11:21", "11:34"),
			},
			wantDrops: []string{"C [09:45, 10:15)"},
			wantOpen:  []window.Window{{Start: clk("10:00"), End: clk("11:10")}},
		},
		{
			name: "a bridge after one side expired", mode: acc,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:50", "10:01"),
				sessionOrder("B", "10:45", "09:55", "10:46"),
				tickAt("11:30", "11:40"), // A expires, B is late
				sessionOrder("C", "10:25", "11:30", "11:41"),
				tickAt("11:31", "11:43"),
			},
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:30", 0, O, 1, "11:30", "11:40"),
				sp(acc, "10:45", "11:15", 0, O, 1, "11:30", "11:40"),
				merged(sp(acc, "10:45", "11:15", 1, M, 0, "11:31", "11:43"), "10:25"),
				sp(acc, "10:25", "11:15", 0, L, 2, "11:31", "11:43"),
			},
			wantOpen: []window.Window{{Start: clk("10:25"), End: clk("11:15")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sessionSpec(tt.mode)
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			var open []window.Session
			var panes []window.Pane
			var drops []string
			for i, st := range tt.steps {
				wm, now := clk(st.wm), clk(st.now)
				if st.id == "" {
					var keep []window.Session
					for _, ss := range open {
						out, err := s.OnTickSession("C-1", ss, wm, now)
						if err != nil {
							t.Fatalf("step %d: %v", i, err)
						}
						panes = append(panes, out.Panes...)
						if again, err := s.OnTickSession("C-1", out.Session, wm, now); err != nil || len(again.Panes) > 0 {
							t.Fatalf("step %d: the tick again gave %v, %v", i, again.Panes, err)
						}
						if !out.Expired {
							keep = append(keep, out.Session)
						}
					}
					open = keep
					continue
				}
				o := window.Order{ID: st.id, Key: "C-1", EventTime: clk(st.at), Measures: ms("10", 1, 1)}
				if w := s.WindowOf(o.EventTime); s.Classify(w, wm) == window.TooLate {
					drops = append(drops, fmt.Sprintf("%s [%s, %s)", st.id, w.Start.Format("15:04"), w.End.Format("15:04")))
					if _, err := s.AcceptSession(open, o, wm, now); err == nil {
						t.Fatalf("step %d: AcceptSession took a too-late order", i)
					}
					continue
				}
				var err error
				if open, err = s.AcceptSession(open, o, wm, now); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
			if diff := cmp.Diff(tt.wantPanes, panes); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDrops, drops); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
			var got []window.Window
			for _, ss := range open {
				got = append(got, ss.Window())
			}
			if diff := cmp.Diff(tt.wantOpen, got); diff != "" {
				t.Errorf("open sessions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAcceptSessionOverflow pins the reason pedidos_descartados records when
// a merge overflows: it names the order and the session whose sum did not
// fit, and the open sessions stay as they were.
func TestAcceptSessionOverflow(t *testing.T) {
	s := sessionSpec(window.Accumulating)
	wm, now := clk("16:30"), clk("16:31")
	var open []window.Session
	for _, o := range []window.Order{
		{ID: "A", Key: "C-1", EventTime: clk("16:40"), Measures: ms("10", 1, 1)},
		{ID: "B", Key: "C-1", EventTime: clk("17:10"),
			Measures: window.Measures{Importe: numeric.Max(), Pedidos: 1}},
	} {
		var err error
		if open, err = s.AcceptSession(open, o, wm, now); err != nil {
			t.Fatal(err)
		}
	}
	// P at 17:00 bridges [16:40, 17:10) and [17:10, 17:40): 10 + max overflows.
	p := window.Order{ID: "P", Key: "C-1", EventTime: clk("17:00"), Measures: ms("10", 1, 1)}
	got, err := s.AcceptSession(open, p, wm, now)
	if !errors.Is(err, window.ErrOverflow) {
		t.Fatalf("AcceptSession error = %v, want ErrOverflow", err)
	}
	const want = "accept order P: merge session 2026-03-14T17:10:00Z: " +
		"importe 10 + 99999999999999999999999999999.999999999: measure out of range: " +
		"outside NUMERIC's range of ±99999999999999999999999999999.999999999"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("AcceptSession error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(open, got); diff != "" {
		t.Errorf("open sessions after the refusal (-want +got):\n%s", diff)
	}
}
