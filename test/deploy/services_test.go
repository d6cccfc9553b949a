package deploy

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// loadServices reads terraform/services.json, which
// terraform/tests/deployment.tftest.hcl holds equal to what Terraform plans,
// by function. The tests here check it against what Terraform cannot read:
// the Go code's configuration.
func loadServices(t testing.TB) map[string]tfconfig.Service {
	t.Helper()
	d, err := tfconfig.Open("")
	check(t, err)
	out := map[string]tfconfig.Service{}
	for _, s := range d.Services {
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
			values := map[string]string{"STATE_STORE": "firestore", "WAREHOUSE": "bigquery"} // the production backends, everywhere
			maps.Copy(values, defaults[fn])
			for k, v := range values {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
		})
	}
}

// One attempt's own deadline stays a margin below the request timeout, so the
// ledger write recording a failed attempt happens before Cloud Run cuts the
// request (internal/config refuses a smaller margin, or a ledger lease a
// redelivery could take over a loading file with: TestServiceEnvironment).
func TestIngestDeadlineLeavesAMarginBelowTheTimeout(t *testing.T) {
	services := loadServices(t)
	for _, fn := range []string{"IngestCSV", "SweepLanding"} {
		s := services[fn]
		deadline, err := time.ParseDuration(s.Env["INGEST_DEADLINE"])
		if err != nil || s.Timeout != config.EventDeadline || deadline != s.Timeout-60*time.Second {
			t.Errorf("%s: timeout %s, INGEST_DEADLINE %s (%v): want %s and the timeout less 60s", fn, s.Timeout, deadline, err, config.EventDeadline)
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
	check(t, err)
	read := map[string]bool{}
	lookup := envconfig.LookuperFunc(func(key string) (string, bool) {
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

// Each view is defined once, by internal/warehouse's View.SQL (the embedded
// warehouse creates it from there); the Terraform SQL must say the same for
// every declared aggregation, in both accumulation modes (module.json holds
// both; terraform test holds the planned view to its declared mode's, and
// checks use_legacy_sql = false and the table_id).
func TestViewMatchesWarehouseDefinition(t *testing.T) {
	views := readModuleData(t).Views
	d, err := tfconfig.Open("")
	check(t, err)
	qualify := func(table string) string { return "`" + d.Project + "." + d.Dataset + "." + table + "`" }
	if wv := warehouse.Views(); len(wv) != len(views) {
		t.Fatalf("%d views in warehouse.Views(), %d in Terraform", len(wv), len(views))
	}
	for _, wv := range warehouse.Views() {
		for _, mode := range []string{warehouse.Accumulating, warehouse.Discarding} {
			t.Run(wv.Name+"/"+mode, func(t *testing.T) {
				got, ok := views[wv.Name].SQL[mode]
				if !ok {
					t.Fatalf("no view %s in %s mode in Terraform", wv.Name, mode)
				}
				wv.Accumulation = mode
				want, err := wv.SQL(warehouse.BigQuery, qualify)
				check(t, err)
				// What View.SQL selects and reads is internal/warehouse's TestViewSQL.
				if got != normaliseSQL(want) {
					t.Errorf("Terraform view differs from warehouse View.SQL(BigQuery):\nterraform: %s\nwarehouse: %s", got, normaliseSQL(want))
				}
			})
		}
	}
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
)

// normaliseSQL drops comments and collapses whitespace, as
// terraform/tests/deployment.tftest.hcl does to module.json's SQL.
func normaliseSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, " ")
	s = sqlSpace.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, "( ", "(")
	s = strings.ReplaceAll(s, " )", ")")
	return strings.TrimSpace(s)
}
