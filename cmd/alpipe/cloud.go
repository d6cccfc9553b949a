package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/setup"
)

// cloudEnv checks, before anything connects, that the environment names
// the production backends, and otherwise says what to set: the commands
// that work on real buckets would fail later with an engine error.
func cloudEnv(what string) error {
	var c config.Cloud
	if err := config.Load(context.Background(), &c, nil); err == nil {
		return nil
	}
	return fmt.Errorf("%s works on the deployed backends: set %s as the deployed functions have them (terraform output), or drop --cloud / gs:// to use a local alpipe serve", what, strings.Join(c.Missing(), ", "))
}

// cloudApp builds the production backends of the named functions from the
// environment, for commands that work on real buckets (gs://...) or
// --cloud rather than through a local server: the same code path as the
// functions on Cloud Run. The caller closes the returned App.
func cloudApp(ctx context.Context, what string, names ...string) (*setup.App, error) {
	if err := cloudEnv(what); err != nil {
		return nil, err
	}
	proc, err := functions.Prepare(ctx, names, setup.Options{Logger: logging.New(os.Stderr, slog.LevelWarn)})
	if err != nil {
		return nil, err
	}
	return proc.App, nil
}

// reingestBackends are what backfill and requeue read and ingest through:
// for a gs:// argument without --server, the environment's production
// backends (IngestCSV's code path); otherwise the server's fake Cloud
// Storage, ledger and IngestCSV.
func (c *cmdline) reingestBackends(ctx context.Context, gs bool) (
	objs *objects.GCS, led reingest.LedgerReader, ing reingest.Ingester, closeFn func(), err error,
) {
	if gs && !c.isSet("server") {
		app, err := cloudApp(ctx, c.Name()+" gs://...", functions.IngestCSVName)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return app.Objects, app.Ledger, reingest.Direct{Service: app.Ingest}, func() { app.Close() }, nil
	}
	objs, closeFn, err = c.srv.Storage(ctx)
	return objs, c.srv, c.srv, closeFn, err
}
