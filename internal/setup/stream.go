package setup

import (
	"context"
	"errors"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// BuildStream builds the processor shared by AggregateOrders and
// AdvanceWatermark: both read the same aggregation and processor settings
// (config.Stream), and one process serving both (the local server) must use
// one processor over one store, built once with all its options: a second
// call returns the first processor.
func (a *App) BuildStream(ctx context.Context, b config.Backends, spec window.Spec, st config.Stream) (*stream.Processor, error) {
	a.mu.Lock()
	built := a.stream
	a.mu.Unlock()
	if built != nil {
		return built, nil // same environment, same settings
	}
	store, err := a.Store(ctx, b)
	if err != nil {
		return nil, err
	}
	wh, err := a.Warehouse(ctx, b)
	if err != nil {
		return nil, err
	}
	p, err := stream.New(store, wh, []window.Spec{spec}, contract.IsCountry, a.log, st.Options()...)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stream == nil {
		a.stream = p
	}
	return a.stream, nil
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
