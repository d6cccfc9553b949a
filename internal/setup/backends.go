package setup

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	bqwarehouse "github.com/alpinashop/alpipe/internal/warehouse/bigquery"
	"github.com/alpinashop/alpipe/internal/warehouse/remote"
)

// bigQueryOptions points the client at BIGQUERY_EMULATOR_HOST when set, the
// way the storage and Firestore clients honour their emulator variables:
// plain HTTP and no credentials.
func bigQueryOptions(b config.Backends) []option.ClientOption {
	if b.BigQueryEndpoint == "" {
		return nil
	}
	return []option.ClientOption{
		option.WithEndpoint("http://" + b.BigQueryEndpoint + "/bigquery/v2/"),
		option.WithoutAuthentication(),
	}
}

// Objects returns the Cloud Storage adapter, creating the client once.
func (a *App) Objects(ctx context.Context) (*objects.GCS, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.objectsLocked(ctx)
}

func (a *App) objectsLocked(ctx context.Context) (*objects.GCS, error) {
	if a.objects != nil {
		return a.objects, nil
	}
	client := a.opts.Storage
	if client == nil {
		c, err := objects.NewClient(ctx)
		if err != nil {
			return nil, fmt.Errorf("cloud storage client: %w", err)
		}
		a.closers = append(a.closers, c.Close)
		client = c
	}
	g, err := objects.NewGCS(client)
	if err != nil {
		return nil, err
	}
	a.storage, a.objects = client, g
	return g, nil
}

// Store returns the document store selected by STATE_STORE, opened once.
func (a *App) Store(ctx context.Context, b config.Backends) (docstore.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := b.State + "|" + b.DataDir + "|" + b.Project + "|" + b.Database
	if s, ok := a.stores[key]; ok {
		return s, nil
	}
	var s docstore.Store
	switch b.State {
	case config.Embedded:
		path, err := a.dataPath(b, "state.db")
		if err != nil {
			return nil, err
		}
		bs, err := boltstore.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open embedded state %s: %w", path, err)
		}
		a.closers = append(a.closers, bs.Close)
		s = bs
	case config.Firestore:
		client, err := firestore.NewClientWithDatabase(ctx, b.Project, b.Database)
		if err != nil {
			return nil, fmt.Errorf("firestore client: %w", err)
		}
		a.closers = append(a.closers, client.Close)
		fs, err := fsstore.New(client)
		if err != nil {
			return nil, err
		}
		s = fs
	default:
		return nil, fmt.Errorf("STATE_STORE=%q is not a known backend", b.State)
	}
	a.stores[key] = s
	return s, nil
}

// Warehouse returns the warehouse selected by WAREHOUSE, opened once.
func (a *App) Warehouse(ctx context.Context, b config.Backends) (Warehouse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := b.Warehouse + "|" + b.DataDir + "|" + b.Project + "|" + b.Dataset + "|" + b.WarehouseURL + "|" + b.StagingBucket + "|" + b.BigQueryEndpoint
	if w, ok := a.whs[key]; ok {
		return w, nil
	}
	var w Warehouse
	switch b.Warehouse {
	case config.DuckDB:
		if a.opts.EmbeddedWarehouse == nil {
			// A setting this binary cannot honour is the configuration's
			// fault, refused before any client exists (the warehouse is
			// built first): report it as such, naming the variable.
			return nil, errors.Join(config.ErrInvalid, errors.New("WAREHOUSE=duckdb: this binary links no embedded warehouse (cmd/server is built without cgo); set WAREHOUSE=bigquery, or WAREHOUSE=remote to use a running `alpipe serve`"))
		}
		ew, err := a.opts.EmbeddedWarehouse(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("open embedded warehouse: %w", err)
		}
		if c, ok := ew.(interface{ Close() error }); ok {
			a.closers = append(a.closers, c.Close)
		}
		w = ew
	case config.BigQuery:
		client, err := bigquery.NewClient(ctx, b.Project, bigQueryOptions(b)...)
		if err != nil {
			return nil, fmt.Errorf("bigquery client: %w", err)
		}
		client.Location = b.Location
		a.closers = append(a.closers, client.Close)
		// Only a function that loads files stages them: the stream services
		// append rows and must start without a staging bucket or a storage
		// client.
		var staging bqwarehouse.Staging
		if b.StagingBucket != "" {
			g, err := a.objectsLocked(ctx)
			if err != nil {
				return nil, err
			}
			staging = g
		}
		bw, err := bqwarehouse.New(client, staging, bqwarehouse.Options{
			Project: b.Project, Dataset: b.Dataset, Location: b.Location,
			StagingBucket: b.StagingBucket, StagingPrefix: b.StagingPrefix,
		})
		if err != nil {
			return nil, err
		}
		w = bw
	case config.Remote:
		rw, err := remote.New(b.WarehouseURL, nil)
		if err != nil {
			return nil, fmt.Errorf("WAREHOUSE_URL: %w", err)
		}
		w = rw
	default:
		return nil, fmt.Errorf("WAREHOUSE=%q is not a known backend", b.Warehouse)
	}
	a.whs[key] = w
	if a.querier == nil {
		a.querier = w
	}
	return w, nil
}

func (a *App) newIngest(ctx context.Context, cfg config.Ingest) (*ingest.Service, error) {
	// The warehouse first: a misconfigured one is the likeliest mistake and
	// must be reported before any cloud client asks for credentials.
	wh, err := a.Warehouse(ctx, cfg.Backends)
	if err != nil {
		return nil, err
	}
	objs, err := a.Objects(ctx)
	if err != nil {
		return nil, err
	}
	store, err := a.Store(ctx, cfg.Backends)
	if err != nil {
		return nil, err
	}
	l, err := ledger.New(store, ledger.Options{Lease: cfg.Lease})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.ledger = l
	a.mu.Unlock()
	feeds, err := contract.Default()
	if err != nil {
		return nil, err
	}
	return ingest.New(objs, l, wh, feeds, ingest.Config{
		QuarantineBucket: cfg.QuarantineBucket,
		QuarantinePrefix: cfg.QuarantinePrefix,
		LandingBucket:    cfg.LandingBucket,
		LandingPrefixes:  cfg.LandingPrefixes,
		MaxRecordBytes:   cfg.MaxRecordBytes,
		Deadline:         cfg.Deadline,
	}, a.now, a.log)
}
