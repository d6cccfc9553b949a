// Package setup wires configuration to adapters and services: it is the one
// place that knows which backend implements which port. Clients are created
// once per process and shared by the functions the process serves; which
// functions those are, and their configuration, is package functions'
// wiring table, which builds them all before the process serves.
package setup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/sweep"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is the warehouse port (its contract is in package warehouse):
// every backend the functions may be given implements all of it.
type Warehouse = warehouse.Warehouse

// Options are the parts of the wiring a program may provide itself.
type Options struct {
	// Lookup reads configuration; nil means the process environment.
	Lookup envconfig.Lookuper
	// Now is the processing-time clock; nil means time.Now.
	Now func() time.Time
	// Logger defaults to Cloud Logging JSON on stdout.
	Logger *slog.Logger
	// EmbeddedWarehouse opens the embedded warehouse (DuckDB). Programs that
	// link it (the CLI) set this; cmd/server does not, so WAREHOUSE=duckdb
	// fails there at start with a clear message.
	EmbeddedWarehouse func(ctx context.Context, b config.Backends) (Warehouse, error)
	// Storage overrides the Cloud Storage client (default: objects.NewClient,
	// which honours STORAGE_EMULATOR_HOST).
	Storage *storage.Client
}

// App holds one process's clients and services.
type App struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex
	storage *storage.Client
	objects *objects.GCS
	stores  map[string]docstore.Store
	whs     map[string]Warehouse
	closers []func() error

	ingest  *ingest.Service
	ledger  *ledger.Ledger
	querier warehouse.Querier
	stream  *stream.Processor
	sweeper *sweep.Sweeper
}

// New returns an App with no services built yet.
func New(opts Options) *App {
	a := &App{opts: opts, log: opts.Logger, now: opts.Now, stores: map[string]docstore.Store{}, whs: map[string]Warehouse{}}
	if a.log == nil {
		a.log = logging.New(os.Stdout, slog.LevelInfo)
	}
	if a.now == nil {
		a.now = time.Now
	}
	return a
}

// Lookup is where the functions read their configuration.
func (a *App) Lookup() envconfig.Lookuper {
	if a.opts.Lookup == nil {
		return envconfig.OsLookuper()
	}
	return a.opts.Lookup
}

// BuildIngest builds the IngestCSV service from its configuration, once per
// process: later calls return the first service.
func (a *App) BuildIngest(ctx context.Context, cfg config.Ingest) (*ingest.Service, error) {
	a.mu.Lock()
	built := a.ingest
	a.mu.Unlock()
	if built != nil {
		return built, nil
	}
	svc, err := a.newIngest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.ingest = svc
	a.mu.Unlock()
	return svc, nil
}

// Logger is the process logger.
func (a *App) Logger() *slog.Logger { return a.log }

// Now is the process clock.
func (a *App) Now() time.Time { return a.now() }

// IngestService returns the IngestCSV service.
func (a *App) IngestService() (*ingest.Service, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ingest == nil {
		return nil, errors.New("IngestCSV is not configured in this process")
	}
	return a.ingest, nil
}

// Ledger is the ingest ledger, once IngestCSV is built.
func (a *App) Ledger() *ledger.Ledger {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ledger
}

// Querier reads the warehouse the functions write, once one is open.
func (a *App) Querier() warehouse.Querier {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.querier
}

// Close releases every client and embedded engine.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

func (a *App) dataPath(b config.Backends, name string) (string, error) {
	if err := os.MkdirAll(b.DataDir, 0o750); err != nil {
		return "", fmt.Errorf("data folder %s: %w", b.DataDir, err)
	}
	return filepath.Join(b.DataDir, name), nil
}
