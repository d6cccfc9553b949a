package setup_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// deployedEnv is each Terraform service's environment as Cloud Run gives it,
// with the Google services replaced by addresses nothing listens on: every
// client is built without a network call, so building must succeed with no
// emulator running, and a failure here is a service that would not start.
func deployedEnv(t *testing.T) map[string]map[string]string {
	t.Helper()
	d, err := tfconfig.Open("")
	if err != nil {
		t.Fatalf("read the services from terraform/: %v", err)
	}
	services := d.Services
	if len(services) == 0 {
		t.Fatal("terraform/ deploys no Cloud Run service")
	}
	// The client libraries read their emulator variables from the process
	// environment themselves.
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:9")
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	out := map[string]map[string]string{}
	for _, s := range services {
		env := maps.Clone(s.Env)
		env["K_SERVICE"] = s.Name
		env["FIRESTORE_EMULATOR_HOST"] = "127.0.0.1:9"
		env["STORAGE_EMULATOR_HOST"] = "127.0.0.1:9"
		env["BIGQUERY_EMULATOR_HOST"] = "127.0.0.1:9"
		out[s.Function] = env
	}
	return out
}

func build(t *testing.T, function string, env map[string]string) error {
	t.Helper()
	app, err := functions.Prepare(context.Background(), []string{function}, setup.Options{Lookup: envconfig.MapLookuper(env), Logger: logging.Discard()})
	if err == nil {
		if cerr := app.Close(); cerr != nil {
			t.Errorf("close %s: %v", function, cerr)
		}
	}
	return err
}

// TestConfigurationRefusesWhatConstructorsWould starts each Cloud Run
// service with exactly its Terraform environment (the check that would have
// caught AggregateOrders refusing to start without a staging bucket), then
// changes one variable of a deployed service at a time: whatever the
// constructors would refuse, the configuration must refuse first, naming
// the variable, and whatever the configuration accepts must build.
func TestConfigurationRefusesWhatConstructorsWould(t *testing.T) {
	deployed := deployedEnv(t)
	type env = map[string]string
	type row struct {
		name, function string
		set            map[string]string
		wantVar        string // "" = must build
	}
	var tests []row
	for _, function := range slices.Sorted(maps.Keys(deployed)) {
		tests = append(tests, row{function + " as deployed", function, nil, ""})
	}
	tests = append(tests, []row{
		{"orders without a project", functions.AggregateOrdersName, env{"GOOGLE_CLOUD_PROJECT": ""}, "GOOGLE_CLOUD_PROJECT"},
		{"orders with a bad database ID", functions.AggregateOrdersName, env{"FIRESTORE_DATABASE": "Mi Base"}, "FIRESTORE_DATABASE"},
		{"watermark with no dataset", functions.AdvanceWatermarkName, env{"BIGQUERY_DATASET": ""}, "BIGQUERY_DATASET"},
		{"watermark with no location", functions.AdvanceWatermarkName, env{"BIGQUERY_LOCATION": ""}, "BIGQUERY_LOCATION"},
		{"watermark with a short tick lease", functions.AdvanceWatermarkName, env{"TICK_LEASE": "1s"}, "TICK_LEASE"},
		{"ingest without staging", functions.IngestCSVName, env{"STAGING_BUCKET": ""}, "STAGING_BUCKET"},
		{"ingest with a lease under the deadline", functions.IngestCSVName, env{"LEDGER_LEASE": "5m"}, "LEDGER_LEASE"},
		{"ingest with embedded state", functions.IngestCSVName, env{"STATE_STORE": "embedded"}, "STATE_STORE"},
		{"ingest with the embedded warehouse", functions.IngestCSVName, env{"WAREHOUSE": "duckdb", "STATE_STORE": "embedded", "K_SERVICE": ""}, "WAREHOUSE"},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, ok := deployed[tt.function]
			if !ok {
				t.Fatalf("terraform/ deploys no %s", tt.function)
			}
			env := maps.Clone(base)
			maps.Copy(env, tt.set)
			cfgErr := loadConfig(tt.function, env)
			if cfgErr != nil && tt.wantVar == "" {
				t.Fatalf("configuration refused a deployable setting: %v", cfgErr)
			}
			buildErr := build(t, tt.function, env)
			if tt.wantVar == "" {
				if cfgErr != nil || buildErr != nil {
					t.Fatalf("want a start; configuration: %v; build: %v", cfgErr, buildErr)
				}
				return
			}
			// A refusal must come from validation (ErrInvalid, before any
			// client exists) and name the variable; a constructor's own
			// error would mean validation let something through.
			if !errors.Is(buildErr, config.ErrInvalid) {
				t.Fatalf("build error %v is not a configuration refusal (configuration said: %v)", buildErr, cfgErr)
			}
			if !strings.Contains(buildErr.Error(), tt.wantVar) {
				t.Errorf("refusal %q does not name %s", buildErr, tt.wantVar)
			}
		})
	}
}

func loadConfig(function string, env map[string]string) error {
	cfg, err := functions.Config(function)
	if err != nil {
		return err
	}
	return config.Load(context.Background(), cfg, envconfig.MapLookuper(env))
}
