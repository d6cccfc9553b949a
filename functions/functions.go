// Package functions registers alpipe's Cloud Run functions with the
// functions framework. It only decodes requests, gets the dependencies built
// for this process and calls the core; there is no business logic here.
//
// The framework registers handlers in init(), before main can pass anything
// in, so the dependencies live in one process-wide value built once: either
// provided by an embedding program (the local CLI, with its embedded engines
// and virtual clock) or built from the environment on Prepare.
package functions

import (
	"context"
	"fmt"
	"sync"

	"github.com/alpinashop/alpipe/internal/setup"
)

// Names of the functions, as registered and as FUNCTION_TARGET selects them.
const (
	IngestCSVName        = "IngestCSV"
	AggregateOrdersName  = "AggregateOrders"
	AdvanceWatermarkName = "AdvanceWatermark"
	SweepLandingName     = "SweepLanding"
)

// Names lists every function.
var Names = []string{IngestCSVName, AggregateOrdersName, AdvanceWatermarkName, SweepLandingName}

var process struct {
	mu  sync.Mutex
	app *setup.App
}

// Provide installs the dependencies every function of this process uses.
// The local CLI calls it before serving.
func Provide(app *setup.App) {
	process.mu.Lock()
	defer process.mu.Unlock()
	process.app = app
}

// Prepare builds the dependencies of target (every function when target is
// empty) from the environment, validating the configuration, so that a
// server with an incomplete production setting refuses to start instead of
// failing its first request.
func Prepare(ctx context.Context, target string, opts setup.Options) (*setup.App, error) {
	names := Names
	if target != "" {
		names = []string{target}
	}
	app, err := setup.FromEnv(ctx, names, opts)
	if err != nil {
		return nil, err
	}
	Provide(app)
	return app, nil
}

func current() (*setup.App, error) {
	process.mu.Lock()
	defer process.mu.Unlock()
	if process.app == nil {
		return nil, fmt.Errorf("functions: dependencies not prepared (call functions.Prepare or Provide before serving)")
	}
	return process.app, nil
}
