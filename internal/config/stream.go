package config

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/stream"
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
// name order. It is nil when the settings are invalid, which Validate (and
// so Load) reports first.
func (w Window) Specs() []window.Spec {
	ds, err := w.Declarations()
	if err != nil {
		return nil
	}
	out := make([]window.Spec, len(ds))
	for i, d := range ds {
		out[i] = d.Spec()
	}
	return out
}

func (w Window) problems() []string {
	var probs []string
	// The declarations passed the core's rules when they were parsed, and
	// the environment adds nothing to them, so the selection is all that
	// is left to check.
	ds, err := w.Declarations()
	switch {
	case err != nil:
		probs = append(probs, err.Error())
	case len(ds) == 0:
		probs = append(probs, "no aggregation is declared in internal/aggregation/declarations")
	}
	return probs
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

func (s Stream) problems() []string {
	var probs []string
	if s.TickLease < 10*time.Second {
		probs = append(probs, fmt.Sprintf("TICK_LEASE=%s is below 10s", s.TickLease))
	}
	if s.MaxClockSkew < time.Minute {
		probs = append(probs, fmt.Sprintf("MAX_CLOCK_SKEW=%s is below 1m", s.MaxClockSkew))
	}
	if s.BatchWait < 0 || s.BatchWait > time.Second {
		probs = append(probs, fmt.Sprintf("BATCH_WAIT=%s must be between 0 and 1s", s.BatchWait))
	}
	if s.BatchMaxOrders < 1 || s.BatchMaxOrders > stream.MaxBatchOrders {
		probs = append(probs, fmt.Sprintf("BATCH_MAX_ORDERS=%d must be between 1 and %d", s.BatchMaxOrders, stream.MaxBatchOrders))
	}
	return probs
}

// Options are the processor's options for these settings.
func (s Stream) Options() []stream.Option {
	return []stream.Option{
		stream.WithTickLease(s.TickLease),
		stream.WithMaxClockSkew(s.MaxClockSkew),
		stream.WithBatching(s.BatchWait, s.BatchMaxOrders),
	}
}

// Orders configures AggregateOrders.
type Orders struct {
	Backends
	Window
	Stream
}

// Validate reports every problem at once.
func (c Orders) Validate() error {
	probs := c.validate(false)
	probs = append(probs, c.Window.problems()...)
	probs = append(probs, c.Stream.problems()...)
	return joinProblems("AggregateOrders", probs)
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
	probs := c.validate(false)
	probs = append(probs, c.Window.problems()...)
	probs = append(probs, c.Stream.problems()...)
	if ds, err := c.Window.Declarations(); err == nil {
		probs = append(probs, c.Tick.problems(ds)...)
	}
	return joinProblems("AdvanceWatermark", probs)
}
