package window_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
)

func TestDefaults(t *testing.T) {
	want := window.Spec{
		Name:            "ventas_hora_pais",
		KeyField:        "pais",
		WindowSize:      time.Hour,
		OutOfOrderness:  10 * time.Minute,
		IdleTimeout:     5 * time.Minute,
		EarlyDelay:      60 * time.Second,
		AllowedLateness: 2 * time.Hour,
		LateDelay:       time.Minute,
		Accumulation:    window.Accumulating,
	}
	if diff := cmp.Diff(want, window.Defaults()); diff != "" {
		t.Errorf("Defaults() (-want +got):\n%s", diff)
	}
	if err := window.Defaults().Validate(); err != nil {
		t.Errorf("Defaults().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*window.Spec)
		want   []string // substrings of the error, in order; nil: valid
	}{
		{name: "defaults", change: func(*window.Spec) {}},
		{name: "zero delays and lateness are allowed", change: func(s *window.Spec) {
			s.OutOfOrderness, s.EarlyDelay, s.AllowedLateness = 0, 0, 0
		}},
		{name: "late delay of one tick", change: func(s *window.Spec) { s.LateDelay = window.TickInterval }},
		{name: "discarding, 7 minute windows", change: func(s *window.Spec) {
			s.Accumulation, s.WindowSize = window.Discarding, 7*time.Minute
		}},
		{name: "sliding 1 h every 15 min", change: func(s *window.Spec) { s.Period = 15 * time.Minute }},
		{name: "period equal to the size", change: func(s *window.Spec) { s.Period = time.Hour }},
		{name: "sessions of 30 min", change: func(s *window.Spec) { s.WindowSize, s.Gap = 0, 30*time.Minute }},
		{name: "session gap with a window size", change: func(s *window.Spec) { s.Gap = 30 * time.Minute },
			want: []string{"session windows (gap 30m0s) take no window size (1h0m0s) nor period (0s)"}},
		{name: "fractional session gap", change: func(s *window.Spec) { s.WindowSize, s.Gap = 0, 1500*time.Millisecond },
			want: []string{"session gap 1.5s must be a whole number of seconds"}},
		{name: "negative period", change: func(s *window.Spec) { s.Period = -time.Minute },
			want: []string{"period -1m0s must not be negative"}},
		{name: "fractional period", change: func(s *window.Spec) { s.Period = 1500 * time.Millisecond },
			want: []string{"period 1.5s must be a whole number of seconds"}},
		{name: "period longer than the size", change: func(s *window.Spec) { s.Period = 2 * time.Hour },
			want: []string{"period 2h0m0s must not exceed the window size 1h0m0s"}},
		{name: "period not dividing the size", change: func(s *window.Spec) { s.Period = 25 * time.Minute },
			want: []string{"period 25m0s must divide the window size 1h0m0s"}},
		{name: "period of 7 s does not divide an hour", change: func(s *window.Spec) { s.Period = 7 * time.Second },
			want: []string{"period 7s must divide the window size 1h0m0s"}},
		{name: "empty name", change: func(s *window.Spec) { s.Name = "" },
			want: []string{`aggregation "": name "" must be 1-63 characters`}},
		{name: "name with a slash", change: func(s *window.Spec) { s.Name = "ventas/hora" },
			want: []string{`name "ventas/hora" must be`}},
		{name: "name with capitals", change: func(s *window.Spec) { s.Name = "Ventas" },
			want: []string{`name "Ventas" must be`}},
		{name: "key field empty", change: func(s *window.Spec) { s.KeyField = "" },
			want: []string{`key field "" must be a column name`}},
		{name: "key field collides with a pane column", change: func(s *window.Spec) { s.KeyField = "timing" },
			want: []string{`key field "timing" collides with a column of the panes table`}},
		{name: "zero window", change: func(s *window.Spec) { s.WindowSize = 0 },
			want: []string{"window size 0s must be positive"}},
		{name: "negative window", change: func(s *window.Spec) { s.WindowSize = -time.Hour },
			want: []string{"window size -1h0m0s must be positive"}},
		{name: "fractional window", change: func(s *window.Spec) { s.WindowSize = 1500 * time.Millisecond },
			want: []string{"window size 1.5s must be a whole number of seconds"}},
		{name: "negative out-of-orderness", change: func(s *window.Spec) { s.OutOfOrderness = -time.Second },
			want: []string{"out-of-orderness -1s must not be negative"}},
		{name: "zero idle timeout", change: func(s *window.Spec) { s.IdleTimeout = 0 },
			want: []string{"idle timeout 0s must be positive"}},
		{name: "negative early delay", change: func(s *window.Spec) { s.EarlyDelay = -time.Second },
			want: []string{"early delay -1s must not be negative"}},
		{name: "negative lateness", change: func(s *window.Spec) { s.AllowedLateness = -time.Second },
			want: []string{"allowed lateness -1s must not be negative"}},
		{name: "negative late delay", change: func(s *window.Spec) { s.LateDelay = -time.Second },
			want: []string{"late delay -1s must be at least the tick interval 30s"}},
		{name: "no late delay: a late change waits for a tick anyway", change: func(s *window.Spec) { s.LateDelay = 0 },
			want: []string{"late delay 0s must be at least the tick interval 30s"}},
		{name: "late delay shorter than a tick", change: func(s *window.Spec) { s.LateDelay = 29 * time.Second },
			want: []string{"late delay 29s must be at least the tick interval 30s"}},
		{name: "unknown accumulation", change: func(s *window.Spec) { s.Accumulation = "accumulating" },
			want: []string{`accumulation "accumulating" must be ACCUMULATING or DISCARDING`}},
		{name: "every problem at once", change: func(s *window.Spec) { *s = window.Spec{} },
			want: []string{"name", "key field", "window size", "idle timeout", "accumulation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			tt.change(&s)
			err := s.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error mentioning %q", tt.want)
			}
			msg := err.Error()
			for _, w := range tt.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("Validate() = %q, want it to mention %q (in order)", err, w)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}
