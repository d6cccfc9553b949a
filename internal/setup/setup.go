// Package setup wires configuration to adapters and services: it is the one
// place that knows which backend implements which port. A program says what
// its process runs in a Plan; Build then opens every client the plan needs,
// once, and builds the services over them, all before the process serves.
// An App is the typed result of one Build.
package setup

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"cloud.google.com/go/storage"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/sweep"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is the warehouse port (its contract is in package warehouse):
// every backend the functions may be given implements all of it.
type Warehouse = warehouse.Warehouse

// Options are the parts of the wiring a program may provide itself.
type Options struct {
	Lookup envconfig.Lookuper // nil: the process environment
	Now    func() time.Time   // the processing-time clock; nil: time.Now
	Logger *slog.Logger       // nil: Cloud Logging JSON on stdout
	// EmbeddedWarehouse opens the embedded warehouse (DuckDB). Programs that
	// link it (the CLI) set this; cmd/server does not, so WAREHOUSE=duckdb
	// fails there at start with a clear message.
	EmbeddedWarehouse func(ctx context.Context, b config.Backends) (Warehouse, error)
	// Storage overrides the Cloud Storage client (default: objects.NewClient,
	// which honours STORAGE_EMULATOR_HOST).
	Storage *storage.Client
}

// App is one process's clients (one per backend) and the services its
// functions run. A field is nil exactly when no planned function uses it.
// IngestCSV and SweepLanding share Ingest and Ledger, so that a swept file
// takes exactly the path of a file drop; AggregateOrders and
// AdvanceWatermark share Stream, one processor over one store.
type App struct {
	Objects   *objects.GCS
	Store     docstore.Store
	Warehouse Warehouse

	Ledger  *ledger.Ledger
	Ingest  *ingest.Service
	Stream  *stream.Processor
	Sweeper *sweep.Sweeper

	Log    *slog.Logger
	Now    func() time.Time
	Lookup envconfig.Lookuper // nil: the process environment

	closers []func() error
}

// Querier reads the warehouse the functions write; nil when none is open.
func (a *App) Querier() warehouse.Querier {
	q, _ := a.Warehouse.(warehouse.Querier)
	return q
}

// StatusSources are the parts of this process the status report reads; a
// part the process does not run is left out (not a nil in an interface),
// and the report says so.
func (a *App) StatusSources() status.Sources {
	src := status.Sources{Now: a.Now}
	if a.Ledger != nil {
		src.Ledger = a.Ledger
	}
	if a.Warehouse != nil {
		src.Warehouse = a.Warehouse
	}
	if a.Stream != nil {
		src.Stream = a.Stream
	}
	return src
}

// OnClose adds f to what Close releases: a client a function's handler
// opened for itself (the Cloud Tasks client of the follow-up ticks).
func (a *App) OnClose(f func() error) { a.closers = append(a.closers, f) }

// Close releases every client and embedded engine, the last opened first.
func (a *App) Close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}
