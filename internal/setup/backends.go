package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/objects"
	bqwarehouse "github.com/alpinashop/alpipe/internal/warehouse/bigquery"
)

// openObjects opens the Cloud Storage adapter (opts.Storage when given).
func (a *App) openObjects(ctx context.Context, opts Options) (*objects.GCS, error) {
	if opts.Storage != nil {
		return objects.NewGCS(opts.Storage)
	}
	client, err := objects.NewClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("cloud storage client: %w", err)
	}
	a.closers = append(a.closers, client.Close)
	return objects.NewGCS(client)
}

// openStore opens the document store STATE_STORE selects.
func (a *App) openStore(ctx context.Context, b config.Backends) (docstore.Store, error) {
	switch b.State {
	case config.Embedded:
		path, err := dataPath(b, "state.db")
		if err != nil {
			return nil, err
		}
		bs, err := boltstore.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open embedded state %s: %w", path, err)
		}
		a.closers = append(a.closers, bs.Close)
		return bs, nil
	case config.Firestore:
		client, err := firestore.NewClientWithDatabase(ctx, b.Project, b.Database)
		if err != nil {
			return nil, fmt.Errorf("firestore client: %w", err)
		}
		a.closers = append(a.closers, client.Close)
		return fsstore.New(client)
	default:
		return nil, fmt.Errorf("STATE_STORE=%q is not a known backend", b.State)
	}
}

// openWarehouse opens the warehouse WAREHOUSE selects. BigQuery with a
// staging bucket opens the Cloud Storage adapter too, as a.Objects: the
// stream services append rows and must start without either.
func (a *App) openWarehouse(ctx context.Context, b config.Backends, opts Options) (Warehouse, error) {
	switch b.Warehouse {
	case config.DuckDB:
		if opts.EmbeddedWarehouse == nil {
			// A setting this binary cannot honour is the configuration's
			// fault, refused before any client exists (the warehouse is
			// built first): report it as such, naming the variable.
			return nil, fmt.Errorf("%w: %s", config.ErrInvalid, "WAREHOUSE=duckdb: this binary is built without cgo and links no embedded warehouse; set WAREHOUSE=bigquery (on a laptop, BIGQUERY_EMULATOR_HOST points it at the stand-in of the production-parity stack, scripts/stack.sh up), or use `alpipe serve`, which embeds DuckDB")
		}
		ew, err := opts.EmbeddedWarehouse(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("open embedded warehouse: %w", err)
		}
		if c, ok := ew.(interface{ Close() error }); ok {
			a.closers = append(a.closers, c.Close)
		}
		return ew, nil
	case config.BigQuery:
		var copts []option.ClientOption
		if b.BigQueryEndpoint != "" {
			// As the storage and Firestore clients honour their emulator
			// variables: plain HTTP and no credentials.
			copts = append(copts, option.WithEndpoint("http://"+b.BigQueryEndpoint+"/bigquery/v2/"), option.WithoutAuthentication())
		}
		client, err := bigquery.NewClient(ctx, b.Project, copts...)
		if err != nil {
			return nil, fmt.Errorf("bigquery client: %w", err)
		}
		client.Location = b.Location
		a.closers = append(a.closers, client.Close)
		var staging bqwarehouse.Staging
		if b.StagingBucket != "" {
			if a.Objects, err = a.openObjects(ctx, opts); err != nil {
				return nil, err
			}
			staging = a.Objects
		}
		return bqwarehouse.New(client, staging, bqwarehouse.Options{Project: b.Project, Dataset: b.Dataset, Location: b.Location,
			StagingBucket: b.StagingBucket, StagingPrefix: b.StagingPrefix})
	default:
		return nil, fmt.Errorf("WAREHOUSE=%q is not a known backend", b.Warehouse)
	}
}

func dataPath(b config.Backends, name string) (string, error) {
	if err := os.MkdirAll(b.DataDir, 0o750); err != nil {
		return "", fmt.Errorf("data folder %s: %w", b.DataDir, err)
	}
	return filepath.Join(b.DataDir, name), nil
}
