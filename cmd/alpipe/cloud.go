package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/setup"
)

// cloudIngest builds the production ingest service from the environment,
// for commands that work on real buckets (gs://...) rather than through a
// local server: the same code path as a file drop on Cloud Run. The caller
// closes the returned App.
func cloudIngest(ctx context.Context) (*setup.App, *ingest.Service, *objects.GCS, error) {
	app, err := setup.FromEnv(ctx, []string{"IngestCSV"}, setup.Options{Logger: logging.New(os.Stderr, slog.LevelWarn)})
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := app.IngestService()
	if err == nil {
		var objs *objects.GCS
		if objs, err = app.Objects(ctx); err == nil {
			return app, svc, objs, nil
		}
	}
	_ = app.Close()
	return nil, nil, nil, err
}
