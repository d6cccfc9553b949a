// Package config reads each function's configuration from the environment,
// once, into one typed struct per function, and validates it before the
// function serves anything. Every variable is documented in
// docs/configuration.md (TestREADMEDocumentsEveryVariable holds the table
// to these tags).
package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
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
	Dataset   string `env:"BIGQUERY_DATASET, default=alpinashop_analitica"`
	Location  string `env:"BIGQUERY_LOCATION, default=europe-west1"`
	// StagingBucket holds the NDJSON files BigQuery load jobs read.
	StagingBucket string `env:"STAGING_BUCKET"`
	StagingPrefix string `env:"STAGING_PREFIX, default=staging/"`
	// BigQueryEndpoint points the BigQuery client at a stand-in (host:port,
	// plain HTTP, no credentials): BigQuery has no emulator, so this is how
	// the production-parity stack runs the real adapter against bqfake.
	BigQueryEndpoint string `env:"BIGQUERY_EMULATOR_HOST"`
	// Service is set by Cloud Run, where embedded state would vanish with
	// the instance.
	Service string `env:"K_SERVICE"`
}

// problems collects what is wrong with a configuration, in words.
type problems []string

// add records the problem unless ok.
func (p *problems) add(ok bool, format string, args ...any) {
	if !ok {
		*p = append(*p, fmt.Sprintf(format, args...))
	}
}

func joinProblems(fn string, probs problems) error {
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%s configuration: %s", fn, strings.Join(probs, "; "))
}

func (b Backends) validate(needsStaging bool) (p problems) {
	add := p.add
	switch b.State {
	case Embedded:
		add(b.DataDir != "", "STATE_STORE=embedded needs ALPIPE_DATA_DIR")
		// The ledger, dedup records and window state would live in one
		// instance's file and vanish with it: double counts, lost panes.
		add(b.Service == "" && b.Warehouse != BigQuery,
			"STATE_STORE=embedded keeps state in one instance's local file; "+
				"on Cloud Run or with WAREHOUSE=bigquery set STATE_STORE=firestore")
	case Firestore:
		add(b.Project != "", "STATE_STORE=firestore needs GOOGLE_CLOUD_PROJECT")
		add(b.Database == "(default)" || databaseID.MatchString(b.Database),
			"FIRESTORE_DATABASE=%q is not a Firestore database ID "+
				"((default), or 4-63 of a-z, 0-9 and '-', starting with a letter)",
			b.Database)
	default:
		add(false, "STATE_STORE=%q: want %s or %s", b.State, Embedded, Firestore)
	}
	switch b.Warehouse {
	case DuckDB:
		add(b.DataDir != "", "WAREHOUSE=duckdb needs ALPIPE_DATA_DIR")
	case BigQuery:
		add(b.Project != "", "WAREHOUSE=bigquery needs GOOGLE_CLOUD_PROJECT")
		add(len(b.Dataset) <= 1024 && datasetID.MatchString(b.Dataset),
			"WAREHOUSE=bigquery needs BIGQUERY_DATASET (letters, digits and '_', at most 1024), got %q",
			b.Dataset)
		add(b.Location != "", "WAREHOUSE=bigquery needs BIGQUERY_LOCATION")
		add(b.BigQueryEndpoint == "" || validHostPort(b.BigQueryEndpoint),
			"BIGQUERY_EMULATOR_HOST=%q: want host:port", b.BigQueryEndpoint)
		add(!needsStaging || b.StagingBucket != "", "WAREHOUSE=bigquery needs STAGING_BUCKET for load jobs")
	default:
		add(false, "WAREHOUSE=%q: want %s or %s", b.Warehouse, DuckDB, BigQuery)
	}
	return p
}

// The identifier rules the clients' servers enforce: checked at start, a
// first-request 400 becomes a start-up error that names the variable.
var (
	databaseID = regexp.MustCompile(`^[a-z][a-z0-9-]{2,61}[a-z0-9]$`)
	datasetID  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != ""
}

// Ingest configures IngestCSV.
type Ingest struct {
	Backends
	// LandingBucket and LandingPrefixes are the only objects IngestCSV
	// loads: an event for any other bucket (quarantine, staging) or prefix
	// is logged and acknowledged, never loaded.
	LandingBucket    string        `env:"LANDING_BUCKET, default=alpinashop-catalogo"`
	LandingPrefixes  []string      `env:"LANDING_PREFIXES, default=exportaciones/"`
	QuarantineBucket string        `env:"QUARANTINE_BUCKET, default=alpinashop-cuarentena"`
	QuarantinePrefix string        `env:"QUARANTINE_PREFIX, default=cuarentena/"`
	Lease            time.Duration `env:"LEDGER_LEASE, default=10m"`
	// Deadline is one attempt's own limit, a margin below the platform's
	// request timeout so that the attempt's clean-failure ledger write
	// happens before Cloud Run cuts the request.
	Deadline       time.Duration `env:"INGEST_DEADLINE, default=480s"`
	MaxRecordBytes int           `env:"MAX_RECORD_BYTES, default=1048576"`
}

// EventDeadline is the longest an event-driven Cloud Run request may run
// (Eventarc's limit, and the IngestCSV service's timeout in Terraform).
const EventDeadline = 540 * time.Second

// DeadlineMargin is what INGEST_DEADLINE must leave below EventDeadline for
// the ledger write that records a failed attempt.
const DeadlineMargin = 30 * time.Second

// Validate reports every problem at once, so one restart fixes them all.
func (c Ingest) Validate() error { return joinProblems("IngestCSV", c.problems()) }

func (c Ingest) problems() problems {
	p := c.validate(true)
	add := p.add
	add(c.LandingBucket != "", "LANDING_BUCKET is empty")
	add(len(c.LandingPrefixes) > 0,
		"LANDING_PREFIXES is empty (\"\" is not a prefix list; "+
			"name the folders the ERP writes, e.g. exportaciones/)")
	add(c.QuarantineBucket != "", "QUARANTINE_BUCKET is empty")
	// Else every quarantine file would fire the ingest of itself.
	sameBucket := c.QuarantineBucket != "" && c.QuarantineBucket == c.LandingBucket
	add(!sameBucket || !overlaps(c.LandingPrefixes, c.QuarantinePrefix),
		"QUARANTINE_PREFIX=%q lies inside LANDING_PREFIXES of the same bucket", c.QuarantinePrefix)
	// A shorter lease would let a redelivery take over a file still loading.
	add(c.Lease >= EventDeadline+time.Second,
		"LEDGER_LEASE=%s must exceed the 540s function deadline", c.Lease)
	add(c.Deadline > 0 && c.Deadline <= EventDeadline-DeadlineMargin,
		"INGEST_DEADLINE=%s must be positive and at most %s "+
			"(the 540s request timeout less a %s margin for the failure record)",
		c.Deadline, EventDeadline-DeadlineMargin, DeadlineMargin)
	add(c.MaxRecordBytes >= 1024, "MAX_RECORD_BYTES=%d is below 1024", c.MaxRecordBytes)
	return p
}

// overlaps reports whether p lies inside one of prefixes or holds one.
func overlaps(prefixes []string, p string) bool {
	return slices.ContainsFunc(prefixes, func(l string) bool {
		return strings.HasPrefix(p, l) || strings.HasPrefix(l, p)
	})
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
		// One line: the error lands in one JSON log field, where a newline
		// from errors.Join would split it.
		return fmt.Errorf("%w: %s", ErrInvalid, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// ErrInvalid marks a configuration that must be fixed before starting.
var ErrInvalid = errors.New("invalid configuration")

// variableOf names the environment variable behind an envconfig error, which
// itself only names the Go field path ("Window: Size: ...").
func variableOf(cfg any, err error) string {
	best := "environment"
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
			} else if strings.HasPrefix(err.Error(), p+":") {
				best = strings.TrimSpace(strings.SplitN(f.Tag.Get("env"), ",", 2)[0])
			}
		}
	}
	walk(reflect.TypeOf(cfg).Elem(), "")
	return best
}

// Sweep configures SweepLanding, the scheduled function that ingests landing
// objects whose finalize events were all lost (Eventarc keeps an undelivered
// event for 24 h and has no dead-letter topic), through IngestCSV's path.
type Sweep struct {
	Ingest
	// Window is how far back the sweeper looks: objects created earlier were
	// either handled or need a person (alpipe backfill).
	Window time.Duration `env:"SWEEP_WINDOW, default=72h"`
	// Grace leaves young objects to Eventarc, whose own retries would
	// otherwise race the sweeper for every file of a normal night.
	Grace time.Duration `env:"SWEEP_GRACE, default=30m"`
	// MaxObjects bounds one run, so that a day-long outage is caught up over
	// several scheduler ticks instead of one request that times out.
	MaxObjects  int `env:"SWEEP_MAX_OBJECTS, default=100"`
	Concurrency int `env:"SWEEP_CONCURRENCY, default=2"`
}

// Validate reports every problem at once.
func (c Sweep) Validate() error {
	p := c.problems()
	p.add(c.Grace > 0, "SWEEP_GRACE=%s must be positive (Eventarc must get the first chance)", c.Grace)
	p.add(c.Window > c.Grace, "SWEEP_WINDOW=%s must exceed SWEEP_GRACE=%s", c.Window, c.Grace)
	p.add(c.MaxObjects >= 1, "SWEEP_MAX_OBJECTS=%d is below 1", c.MaxObjects)
	p.add(c.Concurrency >= 1 && c.Concurrency <= 16, "SWEEP_CONCURRENCY=%d: want 1 to 16", c.Concurrency)
	return joinProblems("SweepLanding", p)
}
