// Package functions is alpipe's wiring table: one entry per Cloud Run
// function, each naming the function, reading its configuration and
// building its HTTP handler over clients built once for the process. It
// only decodes requests and calls the core; there is no business logic here.
//
// Adding a function is one entry in table plus its handler file. Both
// cmd/server (one function per Cloud Run service, or all) and `alpipe
// serve` (all, beside the local routes) serve what Build returns; nothing
// is registered in init() and no process-wide value holds the clients.
package functions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/alpinashop/alpipe/internal/setup"
)

// Names of the functions, as routed and as FUNCTION_TARGET selects them.
const (
	IngestCSVName        = "IngestCSV"
	AggregateOrdersName  = "AggregateOrders"
	AdvanceWatermarkName = "AdvanceWatermark"
	SweepLandingName     = "SweepLanding"
)

// Function is one entry of the wiring table.
type Function struct {
	Name string
	// Build loads the function's configuration (through app's lookup,
	// validated) and builds its handler over app's shared clients, failing
	// on the first invalid setting or unreachable dependency.
	Build func(ctx context.Context, app *setup.App) (http.Handler, error)
}

// table is every function this image serves, in the order they are built.
var table = []Function{
	{Name: IngestCSVName, Build: buildIngestCSV},
	{Name: AggregateOrdersName, Build: buildAggregateOrders},
	{Name: AdvanceWatermarkName, Build: buildAdvanceWatermark},
	{Name: SweepLandingName, Build: buildSweepLanding},
}

// Names lists every function.
var Names = func() []string {
	n := make([]string, len(table))
	for i, f := range table {
		n[i] = f.Name
	}
	return n
}()

// Handler is one built function.
type Handler struct {
	Name string
	http.Handler
}

// Process is what Prepare built: the process's clients and the handlers of
// its functions over them. Close releases the clients.
type Process struct {
	App      *setup.App
	Handlers []Handler
}

// Close releases every client and embedded engine.
func (p *Process) Close() error { return p.App.Close() }

// Prepare builds the named functions (every function when names is empty)
// up front, so that a server with an incomplete production setting refuses
// to start instead of failing its first request.
func Prepare(ctx context.Context, names []string, opts setup.Options) (*Process, error) {
	if len(names) == 0 {
		names = Names
	}
	app := setup.New(opts)
	hs, err := build(ctx, app, names)
	if err != nil {
		return nil, errors.Join(err, app.Close())
	}
	return &Process{App: app, Handlers: hs}, nil
}

func build(ctx context.Context, app *setup.App, names []string) ([]Handler, error) {
	hs := make([]Handler, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(table, func(f Function) bool { return f.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown function %q (want one of %v)", n, Names)
		}
		h, err := table[i].Build(ctx, app)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		hs = append(hs, Handler{Name: n, Handler: h})
	}
	return hs, nil
}
