// Package functions is alpipe's wiring table (docs/design.md): one entry
// per Cloud Run function, all validated and built before any is served. No
// function name is spelled outside this package. Only a service that two
// functions share has a setup.Plan method, so that it is built once.
package functions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/setup"
)

// Names of the functions, as routed and as FUNCTION_TARGET selects them;
// localapi repeats the three its client calls (cmd/alpipe's
// TestFunctionRoutesMatchTheFunctions holds them equal).
const (
	IngestCSVName        = "IngestCSV"
	AggregateOrdersName  = "AggregateOrders"
	AdvanceWatermarkName = "AdvanceWatermark"
	SweepLandingName     = "SweepLanding"
)

// table is every function this image serves, in the order they are built.
var table = []Function{
	entry(IngestCSVName,
		func(c *config.Ingest, p *setup.Plan) error { return p.Ingest(*c) },
		ingestCSV),
	entry(AggregateOrdersName,
		func(c *config.Orders, p *setup.Plan) error { return p.Stream(c.Backends, c.Window, c.Stream) },
		aggregateOrders),
	entry(AdvanceWatermarkName,
		func(c *config.Watermark, p *setup.Plan) error { return p.Stream(c.Backends, c.Window, c.Stream) },
		advanceWatermark),
	entry(SweepLandingName,
		func(c *config.Sweep, p *setup.Plan) error { return p.Sweep(*c) },
		sweepLanding),
}

// Function is one entry of the wiring table.
type Function struct {
	Name      string
	newConfig func() config.Validator
	// plan loads the function's configuration (through lookup, validated)
	// and adds what the function runs on to p; the handler it returns is
	// built once p is.
	plan func(ctx context.Context, lookup envconfig.Lookuper, p *setup.Plan) (handlerOf, error)
}

// handlerOf builds a function's handler over the process's built parts.
type handlerOf func(ctx context.Context, app *setup.App) (Handler, error)

// entry makes the table entry of a function configured by a C.
func entry[C any, P interface {
	*C
	config.Validator
}](name string, plan func(*C, *setup.Plan) error, handler func(context.Context, *C, *setup.App) (Handler, error)) Function {
	return Function{
		Name:      name,
		newConfig: func() config.Validator { return P(new(C)) },
		plan: func(ctx context.Context, lookup envconfig.Lookuper, p *setup.Plan) (handlerOf, error) {
			cfg := new(C)
			if err := config.Load(ctx, P(cfg), lookup); err != nil {
				return nil, err
			}
			if err := plan(cfg, p); err != nil {
				return nil, err
			}
			return func(ctx context.Context, app *setup.App) (Handler, error) { return handler(ctx, cfg, app) }, nil
		},
	}
}

// Names lists every function.
var Names = func() (names []string) {
	for _, f := range table {
		names = append(names, f.Name)
	}
	return names
}()

// Config is a zero value of the named function's configuration struct, for
// a program or test that loads it on its own (config.Load).
func Config(name string) (config.Validator, error) {
	f, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return f.newConfig(), nil
}

func lookup(name string) (Function, error) {
	i := slices.IndexFunc(table, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, fmt.Errorf("unknown function %q: want one of %s", name, strings.Join(Names, ", "))
	}
	return table[i], nil
}

// Handler is one built function.
type Handler struct {
	Name string
	http.Handler
	// Event is the function as the functions framework registers a
	// CloudEvent function (IngestCSV); Handler serves it behind the checks
	// of what Eventarc sends. Nil for an HTTP function.
	Event func(context.Context, cloudevents.Event) error
}

// Process is what Prepare built: the process's clients and services and
// the handlers of its functions over them.
type Process struct {
	App      *setup.App
	Handlers []Handler
}

// Close releases every client and embedded engine.
func (p *Process) Close() error { return p.App.Close() }

// Prepare builds the named functions (every function when names is empty)
// up front, so that a server with an incomplete production setting refuses
// to start instead of failing its first request. Every function's
// configuration is validated before any client exists.
func Prepare(ctx context.Context, names []string, opts setup.Options) (*Process, error) {
	if len(names) == 0 {
		names = Names
	}
	var plan setup.Plan
	handlers := make([]handlerOf, len(names))
	for i, n := range names {
		f, err := lookup(n)
		if err != nil {
			return nil, err
		}
		if handlers[i], err = f.plan(ctx, opts.Lookup, &plan); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	app, err := setup.Build(ctx, plan, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(names, ", "), err)
	}
	hs := make([]Handler, len(names))
	for i, n := range names {
		h, err := handlers[i](ctx, app)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", n, err), app.Close())
		}
		h.Name = n
		hs[i] = h
	}
	return &Process{App: app, Handlers: hs}, nil
}
