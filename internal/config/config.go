// Package config reads each function's configuration from the environment,
// once, into one typed struct per function, and validates it before the
// function serves anything. Every variable is documented in the README
// (the table there is checked against these tags by TestREADMEDocumentsEveryVariable).
package config

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// Backend names for the switches.
const (
	Embedded  = "embedded"
	Firestore = "firestore"
	DuckDB    = "duckdb"
	BigQuery  = "bigquery"
	// Remote is the warehouse of a running `alpipe serve`, reached over
	// HTTP: how the cgo-free cmd/server gets a warehouse on a laptop.
	Remote = "remote"
)

// Backends selects where state and tables live. Unset, everything is
// embedded in DataDir, which is what a laptop wants; production sets
// STATE_STORE=firestore and WAREHOUSE=bigquery.
type Backends struct {
	Project   string `env:"GOOGLE_CLOUD_PROJECT"`
	DataDir   string `env:"ALPIPE_DATA_DIR, default=.local"`
	State     string `env:"STATE_STORE, default=embedded"`
	Database  string `env:"FIRESTORE_DATABASE, default=(default)"`
	Warehouse string `env:"WAREHOUSE, default=duckdb"`
	// WarehouseURL is the `alpipe serve` warehouse endpoint for WAREHOUSE=remote.
	WarehouseURL string `env:"WAREHOUSE_URL, default=http://127.0.0.1:8080/_local/warehouse"`
	Dataset      string `env:"BIGQUERY_DATASET, default=alpinashop_analitica"`
	Location     string `env:"BIGQUERY_LOCATION, default=europe-west1"`
	// StagingBucket holds the NDJSON files BigQuery load jobs read.
	StagingBucket string `env:"STAGING_BUCKET"`
	StagingPrefix string `env:"STAGING_PREFIX, default=staging/"`
	// Service is set by Cloud Run: there, embedded state would vanish with
	// the instance, so it is refused.
	Service string `env:"K_SERVICE"`
}

func (b Backends) validate(needsStaging bool) []string {
	var probs []string
	switch b.State {
	case Embedded:
		if b.DataDir == "" {
			probs = append(probs, "STATE_STORE=embedded needs ALPIPE_DATA_DIR")
		}
		// The ledger, dedup records and window state would live in one
		// instance's file and vanish with it: double counts, lost panes.
		if b.Service != "" || b.Warehouse == BigQuery {
			probs = append(probs, "STATE_STORE=embedded keeps state in one instance's local file; on Cloud Run or with WAREHOUSE=bigquery set STATE_STORE=firestore")
		}
	case Firestore:
		if b.Project == "" {
			probs = append(probs, "STATE_STORE=firestore needs GOOGLE_CLOUD_PROJECT")
		}
	default:
		probs = append(probs, fmt.Sprintf("STATE_STORE=%q: want %s or %s", b.State, Embedded, Firestore))
	}
	switch b.Warehouse {
	case DuckDB:
		if b.DataDir == "" {
			probs = append(probs, "WAREHOUSE=duckdb needs ALPIPE_DATA_DIR")
		}
	case BigQuery:
		if b.Project == "" {
			probs = append(probs, "WAREHOUSE=bigquery needs GOOGLE_CLOUD_PROJECT")
		}
		if b.Dataset == "" {
			probs = append(probs, "WAREHOUSE=bigquery needs BIGQUERY_DATASET")
		}
		if needsStaging && b.StagingBucket == "" {
			probs = append(probs, "WAREHOUSE=bigquery needs STAGING_BUCKET for load jobs")
		}
	case Remote:
		if b.WarehouseURL == "" {
			probs = append(probs, "WAREHOUSE=remote needs WAREHOUSE_URL")
		}
	default:
		probs = append(probs, fmt.Sprintf("WAREHOUSE=%q: want %s, %s or %s", b.Warehouse, DuckDB, BigQuery, Remote))
	}
	return probs
}

// Ingest configures IngestCSV.
type Ingest struct {
	Backends
	QuarantineBucket string        `env:"QUARANTINE_BUCKET, default=alpinashop-cuarentena"`
	QuarantinePrefix string        `env:"QUARANTINE_PREFIX, default=cuarentena/"`
	Lease            time.Duration `env:"LEDGER_LEASE, default=10m"`
	MaxRecordBytes   int           `env:"MAX_RECORD_BYTES, default=1048576"`
}

// Validate reports every problem at once, so one restart fixes them all.
func (c Ingest) Validate() error {
	probs := c.validate(true)
	if c.QuarantineBucket == "" {
		probs = append(probs, "QUARANTINE_BUCKET is empty")
	}
	if c.Lease < 9*time.Minute+time.Second {
		// A lease shorter than the 540 s event deadline would let a redelivery
		// take over a file that is still being loaded.
		probs = append(probs, fmt.Sprintf("LEDGER_LEASE=%s must exceed the 540s function deadline", c.Lease))
	}
	if c.MaxRecordBytes < 1024 {
		probs = append(probs, fmt.Sprintf("MAX_RECORD_BYTES=%d is below 1024", c.MaxRecordBytes))
	}
	return joinProblems("IngestCSV", probs)
}

func joinProblems(fn string, probs []string) error {
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%s configuration: %s", fn, strings.Join(probs, "; "))
}

// Validator is a configuration that can check itself.
type Validator interface{ Validate() error }

// Load fills cfg from lookup (nil: the process environment) and validates
// it. Tests pass envconfig.MapLookuper.
func Load(ctx context.Context, cfg Validator, lookup envconfig.Lookuper) error {
	if lookup == nil {
		lookup = envconfig.OsLookuper()
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: cfg, Lookuper: lookup}); err != nil {
		return fmt.Errorf("read configuration: %s: %w", variableOf(cfg, err), err)
	}
	if err := cfg.Validate(); err != nil {
		return errors.Join(ErrInvalid, err)
	}
	return nil
}

// ErrInvalid marks a configuration that must be fixed before starting.
var ErrInvalid = errors.New("invalid configuration")

// variableOf names the environment variable behind an envconfig error, which
// itself only names the Go field path ("Window: Size: ...").
func variableOf(cfg any, err error) string {
	msg := err.Error()
	best := ""
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + ": " + f.Name
			}
			if f.Type.Kind() == reflect.Struct && f.Tag.Get("env") == "" {
				walk(f.Type, p)
				continue
			}
			if strings.HasPrefix(msg, p+":") {
				best = strings.TrimSpace(strings.SplitN(f.Tag.Get("env"), ",", 2)[0])
			}
		}
	}
	walk(reflect.TypeOf(cfg).Elem(), "")
	if best == "" {
		return "environment"
	}
	return best
}
