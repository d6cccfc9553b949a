package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/tick"
	"github.com/alpinashop/alpipe/internal/window"
)

// Window selects the event-time aggregations this deployment runs. What
// each one computes (window, key, measures, D, I, E, L, Ld, accumulation)
// is declared as data in internal/aggregation/declarations; only what is a
// deployment's choice is read from the environment.
type Window struct {
	// Aggregations names the declared aggregations to run, comma-separated;
	// unset runs every declared one. AggregateOrders and AdvanceWatermark
	// must run the same set (Terraform sets neither, so both run all).
	Aggregations []string `env:"AGGREGATIONS"`
}

// Declarations returns the declarations of the running aggregations, in
// name order.
func (w Window) Declarations() ([]aggregation.Declaration, error) {
	all, err := aggregation.Default()
	if err != nil {
		return nil, err
	}
	sel, err := aggregation.Select(all, w.Aggregations)
	if err != nil {
		return nil, fmt.Errorf("AGGREGATIONS: %w", err)
	}
	return sel, nil
}

// Specs are the core's specifications of the running aggregations, in
// name order; nil when the settings are invalid, which Load reports first.
func (w Window) Specs() []window.Spec {
	ds, _ := w.Declarations()
	var out []window.Spec
	for _, d := range ds {
		out = append(out, d.Spec)
	}
	return out
}

// problems checks the selection: the declarations passed the core's rules
// when they were parsed, and the environment adds nothing to them.
func (w Window) problems() problems {
	ds, err := w.Declarations()
	if err != nil {
		return problems{err.Error()}
	}
	var p problems
	p.add(len(ds) > 0, "no aggregation is declared in internal/aggregation/declarations")
	return p
}

// Stream is what the processor shared by AggregateOrders and
// AdvanceWatermark takes besides the aggregation: one process serving both
// builds one processor, so both functions read all of it.
type Stream struct {
	// TickLease bounds how long one tick may hold the aggregation: a tick
	// that dies releases it by expiry, and an overlapping tick answers 200.
	TickLease time.Duration `env:"TICK_LEASE, default=2m"`
	// MaxClockSkew: an order dated more than this after processing time is
	// invalid (dead-lettered, counted).
	MaxClockSkew time.Duration `env:"MAX_CLOCK_SKEW, default=24h"`
	// BatchWait is how long the first delivery of a batch waits for others
	// in this instance; 0 turns batching off.
	BatchWait time.Duration `env:"BATCH_WAIT, default=10ms"`
	// BatchMaxOrders closes a batch early when it holds this many deliveries.
	BatchMaxOrders int `env:"BATCH_MAX_ORDERS, default=200"`
}

func (s Stream) problems() (p problems) {
	p.add(s.TickLease >= 10*time.Second, "TICK_LEASE=%s is below 10s", s.TickLease)
	p.add(s.MaxClockSkew >= time.Minute, "MAX_CLOCK_SKEW=%s is below 1m", s.MaxClockSkew)
	p.add(s.BatchWait >= 0 && s.BatchWait <= time.Second, "BATCH_WAIT=%s must be between 0 and 1s", s.BatchWait)
	p.add(s.BatchMaxOrders >= 1 && s.BatchMaxOrders <= stream.MaxBatchOrders, "BATCH_MAX_ORDERS=%d must be between 1 and %d", s.BatchMaxOrders, stream.MaxBatchOrders)
	return p
}

// Options are the processor's options for these settings.
func (s Stream) Options() []stream.Option {
	return []stream.Option{stream.WithTickLease(s.TickLease), stream.WithMaxClockSkew(s.MaxClockSkew), stream.WithBatching(s.BatchWait, s.BatchMaxOrders)}
}

// Orders configures AggregateOrders.
type Orders struct {
	Backends
	Window
	Stream
}

// Validate reports every problem at once.
func (c Orders) Validate() error {
	return joinProblems("AggregateOrders", slices.Concat(c.validate(false), c.Window.problems(), c.Stream.problems()))
}

// Watermark configures AdvanceWatermark.
type Watermark struct {
	Backends
	Window
	Stream
	Tick
}

// Validate reports every problem at once.
func (c Watermark) Validate() error {
	ds, _ := c.Window.Declarations() // an error is the Window's problem
	return joinProblems("AdvanceWatermark", slices.Concat(c.validate(false), c.Window.problems(), c.Stream.problems(), c.Tick.problems(ds)))
}

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
func (t Tick) problems(ds []aggregation.Declaration) (p problems) {
	if !tick.Valid(t.Interval) {
		return problems{fmt.Sprintf("TICK_INTERVAL=%s: want 1m (Cloud Scheduler alone) or 30s (a follow-up tick through Cloud Tasks)", t.Interval)}
	}
	if t.FollowUps() {
		for _, tp := range t.Tasks().Problems() {
			p = append(p, "TICK_INTERVAL=30s needs TICK_QUEUE, TICK_URL and TICK_INVOKER: "+tp)
		}
		p.add(t.TasksEmulator == "" || validHostPort(t.TasksEmulator), "CLOUD_TASKS_EMULATOR_HOST=%q: want host:port", t.TasksEmulator)
	} else {
		p.add(t.Queue == "" && t.URL == "" && t.Invoker == "", "TICK_QUEUE, TICK_URL and TICK_INVOKER are set but TICK_INTERVAL=1m schedules no follow-up tick: set TICK_INTERVAL=30s or unset them")
	}
	for _, d := range ds {
		p.add(d.EarlyDelay <= 0 || d.EarlyDelay >= t.Interval, "%s: early_delay %s is shorter than TICK_INTERVAL=%s, the time between ticks (write 0s for a pane at every tick)", d.File, d.EarlyDelay, short(t.Interval))
		p.add(d.LateDelay >= t.Interval, "%s: late_delay %s is shorter than TICK_INTERVAL=%s, the time between ticks", d.File, d.LateDelay, short(t.Interval))
	}
	return p
}

// short writes an interval as TICK_INTERVAL is set: 1m, 30s.
func short(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
