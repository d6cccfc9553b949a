package deploy

import (
	"encoding/json"
	"go/ast"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// service is one function's entry of terraform/services.json: the data the
// stack starts each process with, which terraform/tests/deployment.tftest.hcl
// holds equal to what Terraform plans. The tests here check it against what
// Terraform cannot read: the Go code's configuration.
type service struct {
	Service     string            `json:"service"`
	Timeout     string            `json:"timeout"`
	Concurrency int               `json:"concurrency"`
	Env         map[string]string `json:"env"`
}

func loadServices(t testing.TB) map[string]service {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "terraform", "services.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]service
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("terraform/services.json: %v", err)
	}
	return out
}

// The environment each service gets must be exactly what its configuration
// reads (internal/config), with the production backends selected, in the
// forms internal/config parses.
func TestServiceEnvironment(t *testing.T) {
	services := loadServices(t)
	backend := []string{"BIGQUERY_DATASET", "BIGQUERY_LOCATION", "FIRESTORE_DATABASE", "FUNCTION_TARGET", "GOOGLE_CLOUD_PROJECT", "STATE_STORE", "WAREHOUSE"}
	// What each aggregation computes is declared in internal/aggregation,
	// not set here: only what is a deployment's choice.
	stream := []string{"BATCH_MAX_ORDERS", "BATCH_WAIT", "MAX_CLOCK_SKEW", "TICK_LEASE"}
	ingest := []string{
		"INGEST_DEADLINE", "LANDING_BUCKET", "LANDING_PREFIXES", "LEDGER_LEASE", "QUARANTINE_BUCKET", "QUARANTINE_PREFIX",
		"STAGING_BUCKET", "STAGING_PREFIX",
	}
	sweep := []string{"SWEEP_CONCURRENCY", "SWEEP_GRACE", "SWEEP_MAX_OBJECTS", "SWEEP_WINDOW"}
	want := map[string][]string{
		"IngestCSV":        sorted(backend, ingest),
		"AggregateOrders":  sorted(backend, stream),
		"AdvanceWatermark": sorted(backend, stream),
		"SweepLanding":     sorted(backend, ingest, sweep),
	}
	if diff := cmp.Diff(sorted(keysOf(want)), sorted(keysOf(services))); diff != "" {
		t.Fatalf("functions (-want +got):\n%s", diff)
	}
	read := configEnvNames(t)
	read["FUNCTION_TARGET"] = true // read by the functions framework, not internal/config
	for fn, wantKeys := range want {
		t.Run(fn, func(t *testing.T) {
			env := services[fn].Env
			got := sorted(keysOf(env))
			if diff := cmp.Diff(wantKeys, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			for _, k := range got {
				if !read[k] {
					t.Errorf("%s is set but no env tag in internal/config reads it", k)
				}
			}
			if env["STATE_STORE"] != "firestore" || env["WAREHOUSE"] != "bigquery" {
				t.Errorf("STATE_STORE=%q WAREHOUSE=%q, want the production backends firestore and bigquery", env["STATE_STORE"], env["WAREHOUSE"])
			}
		})
	}

	// Stream defaults as the spec gives them, in a form time.ParseDuration
	// and strconv accept.
	env := services["AggregateOrders"].Env
	defaults := map[string]string{
		"TICK_LEASE": "2m", "MAX_CLOCK_SKEW": "24h", "BATCH_WAIT": "10ms", "BATCH_MAX_ORDERS": "200",
	}
	for k, v := range defaults {
		if got := env[k]; got != v {
			t.Errorf("%s = %q, want the spec default %q", k, got, v)
		}
	}
	// internal/config refuses the variables that configured the one
	// aggregation before aggregations were declared as data, and
	// STATE_SHARDS, which state layout 3 has nothing to apply to: a service
	// given one would not start.
	for _, s := range services {
		for _, k := range []string{"AGGREGATION", "AGGREGATION_KEY", "WINDOW_SIZE", "OUT_OF_ORDERNESS", "IDLE_TIMEOUT", "EARLY_DELAY", "ALLOWED_LATENESS", "LATE_DELAY", "ACCUMULATION", "STATE_SHARDS"} {
			if _, set := s.Env[k]; set {
				t.Errorf("%s sets the retired %s", s.Service, k)
			}
		}
	}
	for _, k := range []string{"TICK_LEASE", "MAX_CLOCK_SKEW", "BATCH_WAIT"} {
		if _, err := time.ParseDuration(env[k]); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := strconv.Atoi(env["BATCH_MAX_ORDERS"]); err != nil {
		t.Errorf("BATCH_MAX_ORDERS: %v", err)
	}

	// Ingest and sweeper defaults as interfaces agree them, in the form
	// internal/config parses.
	known := map[string]string{
		"LANDING_PREFIXES": "exportaciones/", "INGEST_DEADLINE": "480s", "LEDGER_LEASE": "10m",
		"QUARANTINE_PREFIX": "cuarentena/", "STAGING_PREFIX": "staging/",
		"SWEEP_WINDOW": "72h", "SWEEP_GRACE": "30m", "SWEEP_MAX_OBJECTS": "100", "SWEEP_CONCURRENCY": "2",
	}
	for k, v := range known {
		if got := services["SweepLanding"].Env[k]; got != v {
			t.Errorf("SweepLanding %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"SWEEP_WINDOW", "SWEEP_GRACE"} {
		if _, err := time.ParseDuration(services["SweepLanding"].Env[k]); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// The limits internal/config enforces on INGEST_DEADLINE (config.EventDeadline
// and config.DeadlineMargin), restated so that this package does not need
// internal/config to compile.
const (
	eventDeadline        = 540 * time.Second
	configDeadlineMargin = 30 * time.Second
)

// One attempt's own deadline stays a margin below the request timeout, so the
// ledger write recording a failed attempt happens before Cloud Run cuts the
// request, and below the ledger lease, so no redelivery takes over a file
// still loading (checked with Go's parser, which the service uses).
func TestIngestDeadlineLeavesAMarginBelowTheTimeout(t *testing.T) {
	services := loadServices(t)
	for _, fn := range []string{"IngestCSV", "SweepLanding"} {
		t.Run(fn, func(t *testing.T) {
			s := services[fn]
			timeout, err := time.ParseDuration(s.Timeout)
			if err != nil {
				t.Fatalf("timeout: %v", err)
			}
			deadline, err := time.ParseDuration(s.Env["INGEST_DEADLINE"])
			if err != nil {
				t.Fatalf("INGEST_DEADLINE: %v", err)
			}
			lease, err := time.ParseDuration(s.Env["LEDGER_LEASE"])
			if err != nil {
				t.Fatalf("LEDGER_LEASE: %v", err)
			}
			if timeout != eventDeadline {
				t.Errorf("timeout %s, want %s", timeout, eventDeadline)
			}
			if deadline != timeout-60*time.Second {
				t.Errorf("INGEST_DEADLINE %s, want the timeout %s less 60s", deadline, timeout)
			}
			if deadline > eventDeadline-configDeadlineMargin || deadline >= lease || lease <= timeout {
				t.Errorf("INGEST_DEADLINE %s must be at most %s and below LEDGER_LEASE %s, which must exceed the timeout (internal/config refuses it)", deadline, eventDeadline-configDeadlineMargin, lease)
			}
		})
	}
}

func sorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Strings(out)
	return out
}

// configEnvNames collects the variable names of every `env:"..."` struct
// tag in internal/config, read from source so that this test does not
// depend on that package compiling.
func configEnvNames(t testing.TB) map[string]bool {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "internal", "config")
	files, err := parseGoFiles(dir)
	if err != nil {
		t.Fatalf("parse internal/config: %v", err)
	}
	names := map[string]bool{}

	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				return true
			}
			if env, ok := reflect.StructTag(tag).Lookup("env"); ok {
				name := strings.TrimSpace(strings.SplitN(env, ",", 2)[0])
				if name != "" {
					names[name] = true
				}
			}
			return true
		})
	}

	if len(names) == 0 {
		t.Fatal("no env tags found in internal/config")
	}
	return names
}
