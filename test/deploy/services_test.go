package deploy

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// loadServices reads terraform/services.json, which
// terraform/tests/deployment.tftest.hcl holds equal to what Terraform plans,
// by function. The tests here check it against what Terraform cannot read:
// the Go code's configuration.
func loadServices(t testing.TB) map[string]tfconfig.Service {
	t.Helper()
	list, err := tfconfig.Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tfconfig.Service{}
	for _, s := range list {
		out[s.Function] = s
	}
	return out
}

// The environment each service gets must be exactly what its configuration
// reads (internal/config), with the production backends selected, with the
// defaults the spec and the interfaces agree. Exactly: no variable that no
// configuration reads, which would look like a setting and change nothing.
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
	if diff := cmp.Diff(keysOf(want), keysOf(services)); diff != "" {
		t.Fatalf("functions (-want +got):\n%s", diff)
	}
	// The stream's defaults as the spec gives them, the ingest's and the
	// sweeper's as the interfaces agree them, in the forms internal/config
	// parses.
	defaults := map[string]map[string]string{
		"AggregateOrders": {"TICK_LEASE": "2m", "MAX_CLOCK_SKEW": "24h", "BATCH_WAIT": "10ms", "BATCH_MAX_ORDERS": "200"},
		"SweepLanding": {
			"LANDING_PREFIXES": "exportaciones/", "INGEST_DEADLINE": "480s", "LEDGER_LEASE": "10m",
			"QUARANTINE_PREFIX": "cuarentena/", "STAGING_PREFIX": "staging/",
			"SWEEP_WINDOW": "72h", "SWEEP_GRACE": "30m", "SWEEP_MAX_OBJECTS": "100", "SWEEP_CONCURRENCY": "2",
		},
	}
	for fn, wantKeys := range want {
		t.Run(fn, func(t *testing.T) {
			env := services[fn].Env
			if diff := cmp.Diff(wantKeys, keysOf(env)); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			read := readVariables(t, fn, env)
			for k := range env {
				if !read[k] {
					t.Errorf("%s is set but %s's configuration does not read it", k, fn)
				}
			}
			// The production backends, everywhere.
			for k, v := range map[string]string{"STATE_STORE": "firestore", "WAREHOUSE": "bigquery"} {
				if env[k] != v {
					t.Errorf("%s = %q, want the production backend %s", k, env[k], v)
				}
			}
			for k, v := range defaults[fn] {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
		})
	}
}

// One attempt's own deadline stays a margin below the request timeout, so the
// ledger write recording a failed attempt happens before Cloud Run cuts the
// request, and below the ledger lease, so no redelivery takes over a file
// still loading (checked with Go's parser, which the service uses).
func TestIngestDeadlineLeavesAMarginBelowTheTimeout(t *testing.T) {
	services := loadServices(t)
	for _, fn := range []string{"IngestCSV", "SweepLanding"} {
		s := services[fn]
		deadline, err := time.ParseDuration(s.Env["INGEST_DEADLINE"])
		if err != nil {
			t.Fatalf("%s: INGEST_DEADLINE: %v", fn, err)
		}
		lease, err := time.ParseDuration(s.Env["LEDGER_LEASE"])
		if err != nil {
			t.Fatalf("%s: LEDGER_LEASE: %v", fn, err)
		}
		if s.Timeout != config.EventDeadline || deadline != s.Timeout-60*time.Second {
			t.Errorf("%s: timeout %s, INGEST_DEADLINE %s: want %s and the timeout less 60s", fn, s.Timeout, deadline, config.EventDeadline)
		}
		if deadline > config.EventDeadline-config.DeadlineMargin || deadline >= lease || lease <= s.Timeout {
			t.Errorf("%s: INGEST_DEADLINE %s must be at most %s and below LEDGER_LEASE %s, which must exceed the timeout (internal/config refuses it)", fn, deadline, config.EventDeadline-config.DeadlineMargin, lease)
		}
	}
}

func sorted(lists ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(lists...))) }

// readVariables loads from env what cmd/server (the image Cloud Run runs)
// loads to serve fn: config.Serving, config.Server (FUNCTION_TARGET) and
// fn's own configuration, which must all accept it; and returns every
// variable the loader looked up.
func readVariables(t *testing.T, fn string, env map[string]string) map[string]bool {
	t.Helper()
	cfg, err := functions.Config(fn)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	lookup := lookuperFunc(func(key string) (string, bool) {
		read[key] = true
		v, ok := env[key]
		return v, ok
	})
	for _, c := range []config.Validator{&config.Serving{}, &config.Server{}, cfg} {
		if err := config.Load(t.Context(), c, lookup); err != nil {
			t.Errorf("%T from the deployed environment: %v", c, err)
		}
	}
	return read
}

type lookuperFunc func(key string) (string, bool)

func (f lookuperFunc) Lookup(key string) (string, bool) { return f(key) }
