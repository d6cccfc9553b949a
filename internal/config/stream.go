package config

import (
	"fmt"
	"time"

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

// Orders configures AggregateOrders.
type Orders struct {
	Backends
	Window
}

// Validate reports every problem at once.
func (c Orders) Validate() error {
	probs := c.validate(false)
	if err := c.Spec().Validate(); err != nil {
		probs = append(probs, err.Error())
	}
	return joinProblems("AggregateOrders", probs)
}

// Watermark configures AdvanceWatermark.
type Watermark struct {
	Backends
	Window
	// TickLease bounds how long one tick may hold the aggregation: a tick
	// that dies releases it by expiry, and an overlapping tick answers 200.
	TickLease time.Duration `env:"TICK_LEASE, default=2m"`
}

// Validate reports every problem at once.
func (c Watermark) Validate() error {
	probs := c.validate(false)
	if err := c.Spec().Validate(); err != nil {
		probs = append(probs, err.Error())
	}
	if c.TickLease < 10*time.Second {
		probs = append(probs, fmt.Sprintf("TICK_LEASE=%s is below 10s", c.TickLease))
	}
	return joinProblems("AdvanceWatermark", probs)
}
