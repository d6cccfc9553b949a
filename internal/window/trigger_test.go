package window_test

import (
	"errors"
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
		Window: window.Window{Start: ts("2026-03-14T17:00:00Z"), End: ts("2026-03-14T18:00:00Z")},
		Key:    "ES",
	}
	total1 = ms("179.8", 1, 2)
	total2 = ms("269.7", 2, 3)
)

func pane(index int64, timing window.Timing, mode window.Accumulation, m window.Measures, wm, now string) *window.Pane {
	return &window.Pane{
		Aggregation: "ventas_hora_pais", Key: "ES",
		WindowStart: ts("2026-03-14T17:00:00Z"), WindowEnd: ts("2026-03-14T18:00:00Z"),
		Index: index, Timing: timing, Accumulation: mode, Measures: m,
		Watermark: ts(wm), EmittedAt: ts(now),
	}
}

type triggerCase struct {
	name    string
	change  func(*window.Spec)
	st      window.PaneState
	c       window.Content
	wm, now string
	want    window.Outcome
}

func discarding(s *window.Spec) { s.Accumulation = window.Discarding }
func lateDelay(d time.Duration) func(*window.Spec) {
	return func(s *window.Spec) { s.LateDelay = d }
}

func TestOnTick(t *testing.T) {
	const (
		acc = window.Accumulating
		dis = window.Discarding
	)
	afterEarly := window.PaneState{NextIndex: 1, Emitted: total1, OnTime: window.OnTimePending}
	afterOnTime := window.PaneState{NextIndex: 2, Emitted: total1, OnTime: window.OnTimeDone}
	tests := []triggerCase{
		// W < end: EARLY panes.
		{name: "nothing accepted", wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:41:00Z"},
		{name: "change younger than E waits",
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T17:40:30Z"), OnTime: true},
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:41:00Z"},
		{name: "change exactly E old fires EARLY",
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T17:40:00Z"), OnTime: true},
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T17:41:00Z",
			want: window.Outcome{State: afterEarly,
				Pane: pane(0, window.TimingEarly, acc, total1, "2026-03-14T17:30:00Z", "2026-03-14T17:41:00Z")}},
		{name: "EARLY with no watermark yet",
			c:   window.Content{Total: total1, FirstPending: ts("2026-03-14T17:40:00Z"), OnTime: true},
			now: "2026-03-14T17:41:00Z",
			want: window.Outcome{State: afterEarly,
				Pane: &window.Pane{Aggregation: "ventas_hora_pais", Key: "ES",
					WindowStart: ts("2026-03-14T17:00:00Z"), WindowEnd: ts("2026-03-14T18:00:00Z"),
					Index: 0, Timing: window.TimingEarly, Accumulation: acc, Measures: total1,
					EmittedAt: ts("2026-03-14T17:41:00Z")}}},
		{name: "second EARLY, accumulating: totals so far", st: afterEarly,
			c:  window.Content{Total: total2, FirstPending: ts("2026-03-14T17:50:00Z"), OnTime: true},
			wm: "2026-03-14T17:40:00Z", now: "2026-03-14T17:52:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total2, OnTime: window.OnTimePending},
				Pane: pane(1, window.TimingEarly, acc, total2, "2026-03-14T17:40:00Z", "2026-03-14T17:52:00Z")}},
		{name: "second EARLY, discarding: the change only", change: discarding, st: afterEarly,
			c:  window.Content{Total: total2, FirstPending: ts("2026-03-14T17:50:00Z"), OnTime: true},
			wm: "2026-03-14T17:40:00Z", now: "2026-03-14T17:52:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total2, OnTime: window.OnTimePending},
				Pane: pane(1, window.TimingEarly, dis, ms("89.9", 1, 1), "2026-03-14T17:40:00Z", "2026-03-14T17:52:00Z")}},
		{name: "no change since the EARLY pane: nothing", st: afterEarly,
			c:  window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T17:40:00Z", now: "2026-03-14T17:52:00Z", want: window.Outcome{State: afterEarly}},
		{name: "zero E fires at the first tick",
			change: func(s *window.Spec) { s.EarlyDelay = 0 },
			c:      window.Content{Total: total1, FirstPending: ts("2026-03-14T17:41:00Z"), OnTime: true},
			wm:     "2026-03-14T17:30:00Z", now: "2026-03-14T17:41:00Z",
			want: window.Outcome{State: afterEarly,
				Pane: pane(0, window.TimingEarly, acc, total1, "2026-03-14T17:30:00Z", "2026-03-14T17:41:00Z")}},

		// W reaches end: ON_TIME exactly once (FIRE_ALWAYS).
		{name: "ON_TIME for a window never emitted",
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T18:09:50Z"), OnTime: true},
			wm: "2026-03-14T18:00:00Z", now: "2026-03-14T18:10:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 1, Emitted: total1, OnTime: window.OnTimeDone},
				Pane: pane(0, window.TimingOnTime, acc, total1, "2026-03-14T18:00:00Z", "2026-03-14T18:10:00Z")}},
		{name: "ON_TIME ignores E", change: func(s *window.Spec) { s.EarlyDelay = time.Hour },
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T18:09:59Z"), OnTime: true},
			wm: "2026-03-14T18:00:00Z", now: "2026-03-14T18:10:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 1, Emitted: total1, OnTime: window.OnTimeDone},
				Pane: pane(0, window.TimingOnTime, acc, total1, "2026-03-14T18:00:00Z", "2026-03-14T18:10:00Z")}},
		{name: "ON_TIME with nothing new since EARLY, accumulating: same totals", st: afterEarly,
			c:  window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T18:01:00Z", now: "2026-03-14T18:11:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total1, OnTime: window.OnTimeDone},
				Pane: pane(1, window.TimingOnTime, acc, total1, "2026-03-14T18:01:00Z", "2026-03-14T18:11:00Z")}},
		{name: "ON_TIME with nothing new since EARLY, discarding: an empty pane", change: discarding, st: afterEarly,
			c:  window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T18:01:00Z", now: "2026-03-14T18:11:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total1, OnTime: window.OnTimeDone},
				Pane: pane(1, window.TimingOnTime, dis, window.Measures{}, "2026-03-14T18:01:00Z", "2026-03-14T18:11:00Z")}},
		{name: "re-running the ON_TIME tick: nothing", st: window.PaneState{NextIndex: 2, Emitted: total1, OnTime: window.OnTimeDone},
			c:  window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T18:01:00Z", now: "2026-03-14T18:11:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total1, OnTime: window.OnTimeDone}}},
		{name: "W jumps past end + L: ON_TIME, then expired", st: afterEarly,
			c:  window.Content{Total: total2, FirstPending: ts("2026-03-14T17:59:00Z"), OnTime: true},
			wm: "2026-03-14T23:50:00Z", now: "2026-03-15T00:00:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 2, Emitted: total2, OnTime: window.OnTimeDone},
				Pane:    pane(1, window.TimingOnTime, acc, total2, "2026-03-14T23:50:00Z", "2026-03-15T00:00:00Z"),
				Expired: true}},
		{name: "no lateness: ON_TIME and expired at once", change: func(s *window.Spec) { s.AllowedLateness = 0 },
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T17:59:00Z"), OnTime: true},
			wm: "2026-03-14T18:00:00Z", now: "2026-03-14T18:10:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 1, Emitted: total1, OnTime: window.OnTimeDone},
				Pane:    pane(0, window.TimingOnTime, acc, total1, "2026-03-14T18:00:00Z", "2026-03-14T18:10:00Z"),
				Expired: true}},

		// A window whose orders were all late never gets ON_TIME.
		{name: "only late orders, Ld not reached: NEVER, no pane", change: lateDelay(time.Minute),
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T19:40:30Z")},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Outcome{State: window.PaneState{OnTime: window.OnTimeNever}}},
		{name: "only late orders, Ld reached: LATE pane 0", change: lateDelay(time.Minute),
			st: window.PaneState{OnTime: window.OnTimeNever},
			c:  window.Content{Total: total1, FirstPending: ts("2026-03-14T19:40:00Z")},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 1, Emitted: total1, OnTime: window.OnTimeNever},
				Pane: pane(0, window.TimingLate, acc, total1, "2026-03-14T19:30:00Z", "2026-03-14T19:41:00Z")}},

		// After ON_TIME: LATE panes.
		{name: "late change, Ld not reached: nothing", change: lateDelay(time.Minute), st: afterOnTime,
			c:  window.Content{Total: total2, FirstPending: ts("2026-03-14T19:40:30Z"), OnTime: true},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z", want: window.Outcome{State: afterOnTime}},
		{name: "late change, Ld reached: LATE, discarding delta", change: func(s *window.Spec) { discarding(s); s.LateDelay = time.Minute },
			st: afterOnTime,
			c:  window.Content{Total: total2, FirstPending: ts("2026-03-14T19:40:00Z"), OnTime: true},
			wm: "2026-03-14T19:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 3, Emitted: total2, OnTime: window.OnTimeDone},
				Pane: pane(2, window.TimingLate, dis, ms("89.9", 1, 1), "2026-03-14T19:30:00Z", "2026-03-14T19:41:00Z")}},
		{name: "no EARLY after ON_TIME even if W is passed in stale", change: func(s *window.Spec) { s.EarlyDelay = 0 },
			st: afterOnTime, c: window.Content{Total: total2, FirstPending: ts("2026-03-14T19:40:00Z"), OnTime: true},
			wm: "2026-03-14T17:30:00Z", now: "2026-03-14T19:41:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 3, Emitted: total2, OnTime: window.OnTimeDone},
				Pane: pane(2, window.TimingLate, acc, total2, "2026-03-14T17:30:00Z", "2026-03-14T19:41:00Z")}},

		// Expiry.
		{name: "expiry flushes an undue late change as the final LATE pane", change: lateDelay(time.Hour),
			st: afterOnTime, c: window.Content{Total: total2, FirstPending: ts("2026-03-14T19:59:00Z"), OnTime: true},
			wm: "2026-03-14T20:00:00Z", now: "2026-03-14T20:10:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 3, Emitted: total2, OnTime: window.OnTimeDone},
				Pane:    pane(2, window.TimingLate, acc, total2, "2026-03-14T20:00:00Z", "2026-03-14T20:10:00Z"),
				Expired: true}},
		{name: "expiry with nothing pending: no pane", st: afterOnTime,
			c:  window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T20:00:00Z", now: "2026-03-14T20:10:00Z",
			want: window.Outcome{State: afterOnTime, Expired: true}},
		{name: "re-running the expiry tick: expired again, no pane",
			st: window.PaneState{NextIndex: 3, Emitted: total2, OnTime: window.OnTimeDone},
			c:  window.Content{Total: total2, OnTime: true},
			wm: "2026-03-14T20:00:00Z", now: "2026-03-14T20:10:00Z",
			want: window.Outcome{State: window.PaneState{NextIndex: 3, Emitted: total2, OnTime: window.OnTimeDone}, Expired: true}},
		{name: "just before expiry", st: afterOnTime, c: window.Content{Total: total1, OnTime: true},
			wm: "2026-03-14T19:59:59.999999999Z", now: "2026-03-14T20:10:00Z", want: window.Outcome{State: afterOnTime}},
		{name: "empty window expires without panes",
			wm: "2026-03-14T20:00:00Z", now: "2026-03-14T20:10:00Z",
			want: window.Outcome{State: window.PaneState{OnTime: window.OnTimeNever}, Expired: true}},
	}
	runTrigger(t, tests, window.Spec.OnTick)
}

type triggerFunc func(window.Spec, window.WindowKey, window.PaneState, window.Content, time.Time, time.Time) (window.Outcome, error)

func runTrigger(t *testing.T, tests []triggerCase, fn triggerFunc) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			if tt.change != nil {
				tt.change(&s)
			}
			var wm time.Time
			if tt.wm != "" {
				wm = ts(tt.wm)
			}
			want := tt.want
			if want == (window.Outcome{}) {
				want.State = tt.st
			}
			got, err := fn(s, cellWK, tt.st, tt.c, wm, ts(tt.now))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscardingDeltaOverflow(t *testing.T) {
	s := window.Defaults()
	s.Accumulation = window.Discarding
	st := window.PaneState{NextIndex: 1, Emitted: window.Measures{Importe: numeric.Min(), Pedidos: 1}}
	c := window.Content{Total: window.Measures{Importe: numeric.Max(), Pedidos: 2}, OnTime: true}
	_, err := s.OnTick(cellWK, st, c, ts("2026-03-14T18:00:00Z"), ts("2026-03-14T18:10:00Z"))
	if !errors.Is(err, window.ErrOverflow) {
		t.Fatalf("OnTick error = %v, want ErrOverflow", err)
	}
	if !contains(err.Error(), "pane ventas_hora_pais|2026-03-14T17:00:00Z|ES|1") {
		t.Errorf("error %q does not name the pane", err)
	}
}

func TestPaneID(t *testing.T) {
	tests := []struct {
		name  string
		start time.Time
		key   string
		index int64
		want  string
	}{
		{name: "plain", start: ts("2026-03-14T18:00:00+01:00"), key: "ES", index: 0,
			want: "ventas_hora_pais|2026-03-14T17:00:00Z|ES|0"},
		{name: "key with separators is escaped", start: ts("2026-03-14T17:00:00Z"), key: "a|b/c d", index: 12,
			want: "ventas_hora_pais|2026-03-14T17:00:00Z|a%7Cb%2Fc%20d|12"},
		{name: "empty key", start: ts("1969-12-31T23:00:00Z"), key: "", index: 3,
			want: "ventas_hora_pais|1969-12-31T23:00:00Z||3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := window.Pane{Aggregation: "ventas_hora_pais", WindowStart: tt.start, Key: tt.key, Index: tt.index}
			if got := p.ID(); got != tt.want {
				t.Errorf("ID() = %q, want %q", got, tt.want)
			}
		})
	}
}
