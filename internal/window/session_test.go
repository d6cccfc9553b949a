package window_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// sessionSpec: sessions of 30 min per cliente_id, E = Ld = 1 min, L = 1 h.
func sessionSpec(mode window.Accumulation) window.Spec {
	s := window.Defaults()
	s.Name, s.KeyField, s.WindowSize, s.Gap = "sesiones_cliente", "cliente_id", 0, 30*time.Minute
	s.AllowedLateness, s.Accumulation = time.Hour, mode
	return s
}

// hm is hh:mm on 2026-03-14 UTC.
func hm(s string) time.Time { return ts("2026-03-14T" + s + ":00Z") }

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
	return window.Pane{Aggregation: "sesiones_cliente", Key: "C-1", WindowStart: hm(start), WindowEnd: hm(end),
		Index: index, Timing: timing, Accumulation: mode, Watermark: hm(wm), EmittedAt: hm(now),
		Measures: window.Measures{Importe: decimal(strconv.FormatInt(10*n, 10)), Pedidos: n, Unidades: n}}
}

func merged(p window.Pane, into string) window.Pane { p.MergedInto = hm(into); return p }

func decimal(s string) numeric.Dec {
	d, err := numeric.Parse(s, true)
	if err != nil {
		panic(err)
	}
	return d
}

// TestSessionsHandWorked plays the specification's session stories
// (docs/event-time.md, "Session windows") through AcceptSession and
// OnTickSession, with the watermark given by hand.
func TestSessionsHandWorked(t *testing.T) {
	const (
		acc = window.Accumulating
		dis = window.Discarding
	)
	E, O, L, M := window.TimingEarly, window.TimingOnTime, window.TimingLate, window.TimingMerged
	tests := []struct {
		name      string
		mode      window.Accumulation
		steps     []sessionStep
		wantPanes []window.Pane
		wantDrops []string
		wantOpen  []window.Window
	}{
		{
			name: "two orders 20 min apart merge",
			mode: acc,
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
			name: "a third order bridges two sessions",
			mode: acc,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:40", "10:01"),
				sessionOrder("B", "10:40", "09:45", "10:41"),
				tickAt("09:50", "10:45"),
				sessionOrder("C", "10:25", "09:50", "10:46"),
				tickAt("09:55", "10:48"),
				tickAt("11:10", "11:20"),
			},
			wantPanes: []window.Pane{
				sp(acc, "10:00", "10:30", 0, E, 1, "09:50", "10:45"),
				sp(acc, "10:40", "11:10", 0, E, 1, "09:50", "10:45"),
				merged(sp(acc, "10:40", "11:10", 1, M, 0, "09:55", "10:48"), "10:00"),
				sp(acc, "10:00", "11:10", 1, E, 3, "09:55", "10:48"),
				sp(acc, "10:00", "11:10", 2, O, 3, "11:10", "11:20"),
			},
			wantOpen: []window.Window{{Start: hm("10:00"), End: hm("11:10")}},
		},
		{
			name: "discarding: the merged identity takes back what it emitted",
			mode: dis,
			steps: []sessionStep{
				sessionOrder("A", "10:00", "09:40", "10:01"),
				sessionOrder("B", "10:40", "09:45", "10:41"),
				tickAt("09:50", "10:45"),
				sessionOrder("C", "10:25", "09:50", "10:46"),
				tickAt("09:55", "10:48"),
			},
			wantPanes: []window.Pane{
				sp(dis, "10:00", "10:30", 0, E, 1, "09:50", "10:45"),
				sp(dis, "10:40", "11:10", 0, E, 1, "09:50", "10:45"),
				merged(sp(dis, "10:40", "11:10", 1, M, -1, "09:55", "10:48"), "10:00"),
				sp(dis, "10:00", "11:10", 1, E, 2, "09:55", "10:48"),
			},
			wantOpen: []window.Window{{Start: hm("10:00"), End: hm("11:10")}},
		},
		{
			name: "a late order extends a session that had its ON_TIME pane",
			mode: acc,
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
			name: "too late for its proto-window though the session it touches is open",
			mode: acc,
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
			wantOpen:  []window.Window{{Start: hm("10:00"), End: hm("11:10")}},
		},
		{
			name: "a bridge after one side expired",
			mode: acc,
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
			wantOpen: []window.Window{{Start: hm("10:25"), End: hm("11:15")}},
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
				wm, now := hm(st.wm), hm(st.now)
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
				o := window.Order{ID: st.id, Key: "C-1", EventTime: hm(st.at), Measures: ms("10", 1, 1)}
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
