package setup_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// deployedEnv is each Terraform service's environment as Cloud Run gives it,
// with the Google services replaced by addresses nothing listens on: every
// client is built without a network call, so building must succeed with no
// emulator running, and a failure here is a service that would not start.
func deployedEnv(t *testing.T) map[string]map[string]string {
	t.Helper()
	services, err := tfconfig.Services(nil)
	if err != nil {
		t.Fatalf("read the services from terraform/: %v", err)
	}
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
	app, err := functions.Prepare(context.Background(), []string{function}, setup.Options{
		Lookup: envconfig.MapLookuper(env),
		Logger: logging.Discard(),
	})
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
	type row struct {
		name, function string
		set            map[string]string
		wantVar        string // "" = must build
	}
	var tests []row
	for _, function := range slices.Sorted(maps.Keys(deployed)) {
		tests = append(tests, row{name: function + " as deployed", function: function})
	}
	tests = append(tests, []row{
		{name: "orders without a project", function: functions.AggregateOrdersName, set: map[string]string{"GOOGLE_CLOUD_PROJECT": ""}, wantVar: "GOOGLE_CLOUD_PROJECT"},
		{name: "orders with a bad database ID", function: functions.AggregateOrdersName, set: map[string]string{"FIRESTORE_DATABASE": "Mi Base"}, wantVar: "FIRESTORE_DATABASE"},
		{name: "watermark with no dataset", function: functions.AdvanceWatermarkName, set: map[string]string{"BIGQUERY_DATASET": ""}, wantVar: "BIGQUERY_DATASET"},
		{name: "watermark with no location", function: functions.AdvanceWatermarkName, set: map[string]string{"BIGQUERY_LOCATION": ""}, wantVar: "BIGQUERY_LOCATION"},
		{name: "watermark with a short tick lease", function: functions.AdvanceWatermarkName, set: map[string]string{"TICK_LEASE": "1s"}, wantVar: "TICK_LEASE"},
		{name: "ingest without staging", function: functions.IngestCSVName, set: map[string]string{"STAGING_BUCKET": ""}, wantVar: "STAGING_BUCKET"},
		{name: "ingest with a lease under the deadline", function: functions.IngestCSVName, set: map[string]string{"LEDGER_LEASE": "5m"}, wantVar: "LEDGER_LEASE"},
		{name: "ingest with embedded state", function: functions.IngestCSVName, set: map[string]string{"STATE_STORE": "embedded"}, wantVar: "STATE_STORE"},
		{name: "ingest with the embedded warehouse", function: functions.IngestCSVName, set: map[string]string{"WAREHOUSE": "duckdb", "STATE_STORE": "embedded", "K_SERVICE": ""}, wantVar: "WAREHOUSE"},
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

// TestEveryFunctionBuildsOnEmbeddedDefaults is the laptop's composition:
// no variable set but the data folder, the embedded store and DuckDB.
func TestEveryFunctionBuildsOnEmbeddedDefaults(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	for _, function := range functions.Names {
		t.Run(function, func(t *testing.T) {
			app, err := functions.Prepare(context.Background(), []string{function}, setup.Options{
				Lookup: envconfig.MapLookuper(map[string]string{"ALPIPE_DATA_DIR": filepath.Join(dir, function)}),
				Logger: logging.Discard(),
				EmbeddedWarehouse: func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
					return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{TempDir: filepath.Join(b.DataDir, "tmp")})
				},
			})
			if err != nil {
				t.Fatalf("%s does not build on the embedded defaults: %v", function, err)
			}
			if err := app.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
