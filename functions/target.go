package functions

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/setup"
)

// PrepareTarget prepares what a serving process is configured for:
// FUNCTION_TARGET names its one function (every function when unset) and
// ALPIPE_CLOCK_FILE may replace its clock (the production-parity stack's
// test clock). cmd/server and Lazy start this way, so both serve the same
// functions from the same configuration.
func PrepareTarget(ctx context.Context, opts setup.Options) (*Process, config.Server, error) {
	var cfg config.Server
	if err := config.Load(ctx, &cfg, opts.Lookup); err != nil {
		return nil, cfg, err
	}
	if cfg.ClockFile != "" {
		c, err := clock.NewFile(cfg.ClockFile)
		if err != nil {
			return nil, cfg, fmt.Errorf("ALPIPE_CLOCK_FILE: %w", err)
		}
		opts.Now = c.Now
		if opts.Logger != nil {
			opts.Logger.Warn("test clock in use: processing time is read from a file", slog.String("file", cfg.ClockFile))
		}
	}
	var names []string
	if cfg.Target != "" {
		names = []string{cfg.Target}
	}
	proc, err := Prepare(ctx, names, opts)
	if err != nil {
		return nil, cfg, fmt.Errorf("start: %w", err)
	}
	return proc, cfg, nil
}

// TargetName is how logs name what FUNCTION_TARGET selects.
func TargetName(target string) string {
	if target == "" {
		return "all functions"
	}
	return target
}
