package setup

import (
	"context"
	"errors"
	"fmt"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// buildStream builds the processor shared by AggregateOrders and
// AdvanceWatermark: both read the same aggregation and processor settings
// (config.Stream), and one process serving both (the local server) must use
// one processor over one store, built once with all its options.
func (a *App) buildStream(ctx context.Context, name string) error {
	var b config.Backends
	var spec window.Spec
	var st config.Stream
	switch name {
	case "AggregateOrders":
		var cfg config.Orders
		if err := config.Load(ctx, &cfg, a.opts.Lookup); err != nil {
			return err
		}
		b, spec, st = cfg.Backends, cfg.Spec(), cfg.Stream
	case "AdvanceWatermark":
		var cfg config.Watermark
		if err := config.Load(ctx, &cfg, a.opts.Lookup); err != nil {
			return err
		}
		b, spec, st = cfg.Backends, cfg.Spec(), cfg.Stream
	default:
		return fmt.Errorf("unknown function %q", name)
	}
	a.mu.Lock()
	built := a.stream
	a.mu.Unlock()
	if built != nil {
		return nil // same environment, same settings
	}
	store, err := a.Store(ctx, b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	wh, err := a.Warehouse(ctx, b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p, err := stream.New(store, wh, []window.Spec{spec}, contract.IsCountry, a.log, st.Options()...)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	a.mu.Lock()
	if a.stream == nil {
		a.stream = p
	}
	a.mu.Unlock()
	return nil
}

// StreamProcessor returns the real-time aggregation processor.
func (a *App) StreamProcessor() (*stream.Processor, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stream == nil {
		return nil, errors.New("AggregateOrders/AdvanceWatermark are not configured in this process")
	}
	return a.stream, nil
}
