// Package bigquery is the production warehouse: the port of package
// warehouse on Google BigQuery, through cloud.google.com/go/bigquery.
//
//   - Load stages a file's rows as newline-delimited JSON in Cloud Storage
//     and appends them with one load job, whose ID is derived from the Load
//     ID and an attempt number: load jobs are free and atomic, and a job ID
//     can exist only once, which is what makes a load exactly once.
//   - RefreshDaily overwrites one partition of an aggregate per date with a
//     query job (table$YYYYMMDD, WRITE_TRUNCATE).
//   - Append streams small rows (panes, dead letters) with insertAll.
//   - Query runs read-only SQL with the dataset as the default dataset.
//
// Tables are created by Terraform (and by the live test), never here: every
// job says CREATE_NEVER, so a missing or misnamed table fails loudly instead
// of being created with a guessed schema.
package bigquery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Staging is where load files are written before a load job reads them
// (objects.GCS satisfies it).
type Staging interface {
	Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) objects.Writer
	Delete(ctx context.Context, bucket, name string) error
}

var _ Staging = (*objects.GCS)(nil)

// Options configures the adapter.
type Options struct {
	Project string // project holding the dataset
	Dataset string // the analytics dataset (alpinashop_analitica)
	// Location is the dataset's location (BIGQUERY_LOCATION), named by
	// every job. It is given, not read from the dataset, so that an
	// instance starts without a request and works on an emulator, whose
	// datasets report none.
	Location string

	// StagingBucket and StagingPrefix say where load files are written:
	// gs://<StagingBucket>/<StagingPrefix><load ID>/a<attempt>-<token>.ndjson.
	// The bucket must be in the dataset's location and should carry a
	// lifecycle rule on the prefix that deletes leftovers after a few days.
	// Only Load stages files, so services that never load run without a
	// bucket, and Load then fails with ErrNoStaging.
	StagingBucket string
	StagingPrefix string

	JobPrefix    string        // starts every job ID; default "alpipe"
	PollInterval time.Duration // how often a running job is checked; default 1s
}

// ErrNoStaging is wrapped by Load when the adapter has no staging bucket.
// It is a configuration error, not a property of the file: not permanent,
// so the event is retried once STAGING_BUCKET is set instead of
// quarantining a good file.
var ErrNoStaging = errors.New("no staging bucket configured (set STAGING_BUCKET): load jobs read their rows from it")

// maxJobPrefixLen keeps "<prefix>-<ID>-a<attempt>" within BigQuery's 1,024
// characters for every Load ID the port allows (900 bytes).
const maxJobPrefixLen = 100

// Warehouse is the BigQuery adapter, safe for concurrent use: create one
// per instance and reuse it (the client holds the connection pool).
type Warehouse struct {
	client  *bigquery.Client
	dataset *bigquery.Dataset
	staging Staging
	opt     Options
}

var (
	_ warehouse.Warehouse   = (*Warehouse)(nil)
	_ warehouse.RowStreamer = (*Warehouse)(nil)
)

// New checks the options and builds the adapter without a request: a
// wrong project or dataset surfaces on the first job. staging may be nil
// only when opt.StagingBucket is empty.
func New(client *bigquery.Client, staging Staging, opt Options) (*Warehouse, error) {
	var errs []error
	if client == nil {
		errs = append(errs, errors.New("nil BigQuery client"))
	}
	if staging == nil && opt.StagingBucket != "" {
		errs = append(errs, fmt.Errorf("nil staging store for staging bucket %q", opt.StagingBucket))
	}
	if opt.Project == "" {
		errs = append(errs, errors.New("empty project"))
	}
	if opt.Dataset == "" {
		errs = append(errs, errors.New("empty dataset"))
	}
	if opt.Location == "" {
		// jobs.get cannot find a job outside the US and EU multi-regions
		// without it: Load would take a finished load for a missing one.
		errs = append(errs, errors.New("empty location (set BIGQUERY_LOCATION to the dataset's)"))
	}
	opt.JobPrefix = cmp.Or(opt.JobPrefix, "alpipe")
	if err := warehouse.CheckID(opt.JobPrefix, maxJobPrefixLen); err != nil {
		errs = append(errs, fmt.Errorf("job prefix: %w", err))
	}
	if opt.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("negative poll interval %s", opt.PollInterval))
	}
	opt.PollInterval = cmp.Or(opt.PollInterval, time.Second)
	if len(errs) > 0 {
		return nil, fmt.Errorf("bigquery warehouse: %w", errors.Join(errs...))
	}
	return &Warehouse{
		client:  client,
		dataset: client.DatasetInProject(opt.Project, opt.Dataset),
		staging: staging,
		opt:     opt,
	}, nil
}
