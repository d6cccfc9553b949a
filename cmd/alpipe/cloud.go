package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
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

// cloudIngest builds the production ingest service from the environment,
// for commands that work on real buckets (gs://...) rather than through a
// local server: the same code path as a file drop on Cloud Run. The caller
// closes the returned App.
func cloudIngest(ctx context.Context, what string) (*setup.App, *ingest.Service, *objects.GCS, error) {
	if err := cloudEnv(what); err != nil {
		return nil, nil, nil, err
	}
	proc, err := functions.Prepare(ctx, []string{functions.IngestCSVName}, setup.Options{Logger: logging.New(os.Stderr, slog.LevelWarn)})
	if err != nil {
		return nil, nil, nil, err
	}
	return proc.App, proc.App.Ingest, proc.App.Objects, nil
}
