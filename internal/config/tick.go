package config

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/tick"
)

// Tick is the watermark timer's cadence (docs/ticks.md). Unset it is
// Cloud Scheduler's minute; TICK_INTERVAL=30s adds one follow-up tick per
// minute through the Cloud Tasks queue of terraform/tasks.tf, which sets
// the other variables.
type Tick struct {
	Interval time.Duration `env:"TICK_INTERVAL, default=1m"`
	// Queue, URL and Invoker: where the follow-up goes (the queue's full
	// name), whom it calls (the watermark service's URL, also the OIDC
	// audience) and as whom (the Scheduler job's invoker account).
	Queue   string `env:"TICK_QUEUE"`
	URL     string `env:"TICK_URL"`
	Invoker string `env:"TICK_INVOKER"`
	// TasksEmulator points the Cloud Tasks client at a stand-in (host:port,
	// plain gRPC, no credentials): Cloud Tasks has no emulator, and the
	// production-parity stack serves one (internal/tick/ticktest).
	TasksEmulator string `env:"CLOUD_TASKS_EMULATOR_HOST"`
}

// TickDeadline is a follow-up's dispatch deadline: the watermark service's
// request timeout and the Scheduler job's attempt deadline (60 s).
const TickDeadline = 60 * time.Second

// FollowUps reports whether ticks schedule follow-ups.
func (t Tick) FollowUps() bool { return t.Interval < tick.Minute }

// Tasks is the Cloud Tasks adapter's configuration.
func (t Tick) Tasks() tick.TasksConfig {
	return tick.TasksConfig{Queue: t.Queue, URL: t.URL, Invoker: t.Invoker, Deadline: TickDeadline, Emulator: t.TasksEmulator}
}

// problems checks the settings and the running declarations against the
// interval: a delay shorter than the interval would promise panes sooner
// than any tick comes, so its declaration is refused, by file.
func (t Tick) problems(ds []aggregation.Declaration) []string {
	var probs []string
	if !tick.Valid(t.Interval) {
		return []string{fmt.Sprintf("TICK_INTERVAL=%s: want 1m (Cloud Scheduler alone) or 30s (a follow-up tick through Cloud Tasks)", t.Interval)}
	}
	if t.FollowUps() {
		for _, p := range t.Tasks().Problems() {
			probs = append(probs, "TICK_INTERVAL=30s needs TICK_QUEUE, TICK_URL and TICK_INVOKER: "+p)
		}
		if t.TasksEmulator != "" && !validHostPort(t.TasksEmulator) {
			probs = append(probs, fmt.Sprintf("CLOUD_TASKS_EMULATOR_HOST=%q: want host:port", t.TasksEmulator))
		}
	} else if t.Queue != "" || t.URL != "" || t.Invoker != "" {
		probs = append(probs, "TICK_QUEUE, TICK_URL and TICK_INVOKER are set but TICK_INTERVAL=1m schedules no follow-up tick: set TICK_INTERVAL=30s or unset them")
	}
	for _, d := range ds {
		if d.EarlyDelay > 0 && d.EarlyDelay < t.Interval {
			probs = append(probs, fmt.Sprintf("%s: early_delay %s is shorter than TICK_INTERVAL=%s, the time between ticks (write 0s for a pane at every tick)", d.File, d.EarlyDelay, short(t.Interval)))
		}
		if d.LateDelay < t.Interval {
			probs = append(probs, fmt.Sprintf("%s: late_delay %s is shorter than TICK_INTERVAL=%s, the time between ticks", d.File, d.LateDelay, short(t.Interval)))
		}
	}
	return probs
}

// short writes an interval as TICK_INTERVAL is set: 1m, 30s.
func short(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
