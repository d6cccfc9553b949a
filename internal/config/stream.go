package config

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// Window is the event-time aggregation, with the specification's defaults
// (docs/event-time.md).
type Window struct {
	Aggregation     string        `env:"AGGREGATION, default=ventas_hora_pais"`
	Key             string        `env:"AGGREGATION_KEY, default=pais"`
	Size            time.Duration `env:"WINDOW_SIZE, default=1h"`
	OutOfOrderness  time.Duration `env:"OUT_OF_ORDERNESS, default=10m"`
	IdleTimeout     time.Duration `env:"IDLE_TIMEOUT, default=5m"`
	EarlyDelay      time.Duration `env:"EARLY_DELAY, default=60s"`
	AllowedLateness time.Duration `env:"ALLOWED_LATENESS, default=2h"`
	LateDelay       time.Duration `env:"LATE_DELAY, default=0s"`
	Accumulation    string        `env:"ACCUMULATION, default=ACCUMULATING"`
	Shards          int           `env:"STATE_SHARDS, default=8"`
}

// Spec turns the settings into the core's aggregation specification.
func (w Window) Spec() window.Spec {
	return window.Spec{
		Name:            w.Aggregation,
		KeyField:        w.Key,
		WindowSize:      w.Size,
		OutOfOrderness:  w.OutOfOrderness,
		IdleTimeout:     w.IdleTimeout,
		EarlyDelay:      w.EarlyDelay,
		AllowedLateness: w.AllowedLateness,
		LateDelay:       w.LateDelay,
		Accumulation:    window.Accumulation(w.Accumulation),
		Shards:          w.Shards,
	}
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
	if err := c.Spec().Validate(); err != nil {
		probs = append(probs, err.Error())
	}
	probs = append(probs, c.Stream.problems()...)
	return joinProblems("AggregateOrders", probs)
}

// Watermark configures AdvanceWatermark.
type Watermark struct {
	Backends
	Window
	Stream
}

// Validate reports every problem at once.
func (c Watermark) Validate() error {
	probs := c.validate(false)
	if err := c.Spec().Validate(); err != nil {
		probs = append(probs, err.Error())
	}
	probs = append(probs, c.Stream.problems()...)
	return joinProblems("AdvanceWatermark", probs)
}
