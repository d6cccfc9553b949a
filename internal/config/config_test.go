package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
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
			env:     map[string]string{"ACCUMULATION": "SUMMING", "STATE_SHARDS": "0"},
			wantErr: []string{"accumulation", "shards 0"},
		},
		{
			name:    "unparseable duration",
			cfg:     &Watermark{},
			env:     map[string]string{"WINDOW_SIZE": "una hora"},
			wantErr: []string{"WINDOW_SIZE"},
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
			name:    "remote warehouse URL that is not one",
			cfg:     &Watermark{},
			env:     map[string]string{"WAREHOUSE": "remote", "WAREHOUSE_URL": "127.0.0.1:8080/_local/warehouse"},
			wantErr: []string{"WAREHOUSE=remote needs WAREHOUSE_URL as an http(s) URL"},
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

func TestDefaultsMatchTheSpecification(t *testing.T) {
	var c Orders
	if err := Load(context.Background(), &c, envconfig.MapLookuper(nil)); err != nil {
		t.Fatal(err)
	}
	s := c.Spec()
	if s.WindowSize != time.Hour || s.OutOfOrderness != 10*time.Minute || s.IdleTimeout != 5*time.Minute ||
		s.EarlyDelay != time.Minute || s.AllowedLateness != 2*time.Hour || s.LateDelay != 0 || s.Accumulation != "ACCUMULATING" {
		t.Errorf("defaults %+v differ from docs/event-time.md", s)
	}
}

func TestInvalidIsMarked(t *testing.T) {
	err := Load(context.Background(), &Ingest{}, envconfig.MapLookuper(map[string]string{"WAREHOUSE": "x"}))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v is not ErrInvalid", err)
	}
}

// TestREADMEDocumentsEveryVariable keeps the README's configuration table
// in step with the env tags.
func TestREADMEDocumentsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
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
			t.Errorf("README does not document %s", m[1])
		}
	}
}
