package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/window"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Validator
		env     map[string]string
		wantErr []string // substrings; none means valid
	}{
		{name: "ingest defaults are valid locally", cfg: &Ingest{}, env: map[string]string{}},
		{name: "orders defaults are valid locally", cfg: &Orders{}, env: map[string]string{}},
		{name: "watermark defaults are valid locally", cfg: &Watermark{}, env: map[string]string{}},
		{
			name:    "bigquery without project, dataset or staging",
			cfg:     &Ingest{},
			env:     map[string]string{"WAREHOUSE": "bigquery", "BIGQUERY_DATASET": ""},
			wantErr: []string{"WAREHOUSE=bigquery needs GOOGLE_CLOUD_PROJECT", "WAREHOUSE=bigquery needs STAGING_BUCKET"},
		},
		{
			name:    "embedded state on Cloud Run",
			cfg:     &Orders{},
			env:     map[string]string{"K_SERVICE": "alpipe-orders"},
			wantErr: []string{"STATE_STORE=embedded keeps state in one instance's local file"},
		},
		{
			name:    "embedded state with BigQuery",
			cfg:     &Ingest{},
			env:     map[string]string{"WAREHOUSE": "bigquery", "GOOGLE_CLOUD_PROJECT": "p", "STAGING_BUCKET": "s"},
			wantErr: []string{"STATE_STORE=embedded keeps state in one instance's local file"},
		},
		{
			name:    "firestore without project",
			cfg:     &Orders{},
			env:     map[string]string{"STATE_STORE": "firestore"},
			wantErr: []string{"STATE_STORE=firestore needs GOOGLE_CLOUD_PROJECT"},
		},
		{
			name:    "unknown backends",
			cfg:     &Watermark{},
			env:     map[string]string{"STATE_STORE": "redis", "WAREHOUSE": "sqlite"},
			wantErr: []string{`STATE_STORE="redis"`, `WAREHOUSE="sqlite"`},
		},
		{
			name:    "lease shorter than the event deadline",
			cfg:     &Ingest{},
			env:     map[string]string{"LEDGER_LEASE": "5m"},
			wantErr: []string{"LEDGER_LEASE=5m0s must exceed the 540s function deadline"},
		},
		{
			name:    "bad window settings are all reported",
			cfg:     &Orders{},
			env:     map[string]string{"AGGREGATIONS": "ventas_dia,ventas_hora_pais"},
			wantErr: []string{`AGGREGATIONS: aggregation "ventas_dia" is not declared (declared: sesiones_cliente, ventas_hora_pais, ventas_sku_hora_movil)`},
		},
		{name: "sweep defaults are valid locally", cfg: &Sweep{}, env: map[string]string{}},
		{name: "server defaults are valid", cfg: &Server{}, env: map[string]string{}},
		{
			name:    "ingest deadline without a margin below the request timeout",
			cfg:     &Ingest{},
			env:     map[string]string{"INGEST_DEADLINE": "540s"},
			wantErr: []string{"INGEST_DEADLINE=9m0s must be positive and at most 8m30s"},
		},
		{
			name:    "no landing area",
			cfg:     &Ingest{},
			env:     map[string]string{"LANDING_BUCKET": "", "LANDING_PREFIXES": ""},
			wantErr: []string{"LANDING_BUCKET is empty", "LANDING_PREFIXES is empty"},
		},
		{
			name:    "quarantine inside the landing area",
			cfg:     &Ingest{},
			env:     map[string]string{"QUARANTINE_BUCKET": "alpinashop-catalogo", "QUARANTINE_PREFIX": "exportaciones/cuarentena/"},
			wantErr: []string{`QUARANTINE_PREFIX="exportaciones/cuarentena/" lies inside LANDING_PREFIXES`},
		},
		{
			name:    "sweep window inside its grace",
			cfg:     &Sweep{},
			env:     map[string]string{"SWEEP_WINDOW": "10m", "SWEEP_MAX_OBJECTS": "0", "SWEEP_CONCURRENCY": "99"},
			wantErr: []string{"SWEEP_WINDOW=10m0s must exceed SWEEP_GRACE=30m0s", "SWEEP_MAX_OBJECTS=0", "SWEEP_CONCURRENCY=99"},
		},
		{
			name:    "test clock against real Firestore",
			cfg:     &Server{},
			env:     map[string]string{"ALPIPE_CLOCK_FILE": "/tmp/now", "PORT": "http"},
			wantErr: []string{"ALPIPE_CLOCK_FILE is a test clock", `PORT="http"`},
		},
		{
			name:    "firestore database and bigquery names the services would refuse",
			cfg:     &Orders{},
			env:     map[string]string{"STATE_STORE": "firestore", "GOOGLE_CLOUD_PROJECT": "p", "FIRESTORE_DATABASE": "Alpipe_DB", "WAREHOUSE": "bigquery", "BIGQUERY_DATASET": "alpinashop-analitica", "BIGQUERY_EMULATOR_HOST": "localhost"},
			wantErr: []string{`FIRESTORE_DATABASE="Alpipe_DB"`, `BIGQUERY_DATASET (letters, digits and '_', at most 1024), got "alpinashop-analitica"`, `BIGQUERY_EMULATOR_HOST="localhost"`},
		},
		{
			name:    "an unknown warehouse",
			cfg:     &Watermark{},
			env:     map[string]string{"WAREHOUSE": "remote"},
			wantErr: []string{`WAREHOUSE="remote": want duckdb or bigquery`},
		},
		{
			name: "stream services need no staging bucket",
			cfg:  &Orders{},
			env: map[string]string{"WAREHOUSE": "bigquery", "STATE_STORE": "firestore", "GOOGLE_CLOUD_PROJECT": "alpinashop-datos",
				"FIRESTORE_DATABASE": "alpipe", "K_SERVICE": "alpipe-orders"},
		},
		{
			name: "production settings",
			cfg:  &Ingest{},
			env: map[string]string{"WAREHOUSE": "bigquery", "STATE_STORE": "firestore", "GOOGLE_CLOUD_PROJECT": "alpinashop-datos",
				"STAGING_BUCKET": "alpinashop-staging"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Load(context.Background(), tt.cfg, envconfig.MapLookuper(tt.env))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded, want errors %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Unset, the environment runs every declared aggregation, and
// ventas_hora_pais is exactly the previous version's one aggregation
// (docs/event-time.md's defaults), so its state and tables carry over.
func TestDefaultsMatchTheSpecification(t *testing.T) {
	var c Orders
	if err := Load(context.Background(), &c, envconfig.MapLookuper(nil)); err != nil {
		t.Fatal(err)
	}
	specs := c.Specs()
	var names []string
	byName := map[string]window.Spec{}
	for _, s := range specs {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	if diff := cmp.Diff([]string{"sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"}, names); diff != "" {
		t.Fatalf("running aggregations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(window.Defaults(), byName["ventas_hora_pais"]); diff != "" {
		t.Errorf("ventas_hora_pais (-docs/event-time.md +declared):\n%s", diff)
	}
}

func TestAggregationsSelects(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "unset runs all", env: map[string]string{}, want: []string{"sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"}},
		{name: "empty runs all", env: map[string]string{"AGGREGATIONS": ""}, want: []string{"sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"}},
		{name: "one", env: map[string]string{"AGGREGATIONS": "ventas_sku_hora_movil"}, want: []string{"ventas_sku_hora_movil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Watermark
			if err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range c.Specs() {
				got = append(got, s.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidIsMarked(t *testing.T) {
	err := Load(context.Background(), &Ingest{}, envconfig.MapLookuper(map[string]string{"WAREHOUSE": "x"}))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v is not ErrInvalid", err)
	}
}

// TestREADMEDocumentsEveryVariable keeps the configuration table, which the
// README points to, in step with the env tags.
func TestREADMEDocumentsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	src := ""
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src += string(b)
	}
	for _, m := range regexp.MustCompile("env:\"([A-Z_]+)").FindAllStringSubmatch(src, -1) {
		if !strings.Contains(string(readme), "`"+m[1]+"`") {
			t.Errorf("docs/configuration.md does not document %s", m[1])
		}
	}
}
