package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/window"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Validator
		env     map[string]string
		wantErr []string // substrings; none means valid
	}{
		{name: "ingest defaults are valid locally", cfg: &Ingest{}},
		{name: "orders defaults are valid locally", cfg: &Orders{}},
		{name: "watermark defaults are valid locally", cfg: &Watermark{}},
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
		{name: "sweep defaults are valid locally", cfg: &Sweep{}},
		{name: "server defaults are valid", cfg: &Server{}},
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
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Load = %v, want ErrInvalid with %q", err, tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Unset, ventas_hora_pais is exactly the previous version's one aggregation
// (docs/event-time.md's defaults), so its state and tables carry over;
// TestAggregationsSelects proves that unset runs every declared one.
func TestDefaultsMatchTheSpecification(t *testing.T) {
	var c Orders
	if err := Load(context.Background(), &c, envconfig.MapLookuper(nil)); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(c.Specs(), func(s window.Spec) bool { return s.Name == "ventas_hora_pais" })
	if i < 0 {
		t.Fatal("ventas_hora_pais does not run by default")
	}
	if diff := cmp.Diff(window.Defaults(), c.Specs()[i]); diff != "" {
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

// TestCloudMissing: a command on production data names every deployed
// backend setting still to make, and none once all are set.
func TestCloudMissing(t *testing.T) {
	deployed := map[string]string{
		"STATE_STORE": "firestore", "WAREHOUSE": "bigquery", "GOOGLE_CLOUD_PROJECT": "p",
		"BIGQUERY_DATASET": "d", "BIGQUERY_LOCATION": "europe-west1",
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "deployed", env: deployed},
		{name: "nothing set", env: map[string]string{},
			want: []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery", "GOOGLE_CLOUD_PROJECT", "BIGQUERY_DATASET", "BIGQUERY_LOCATION"}},
		{name: "the laptop's backends", env: map[string]string{"STATE_STORE": "embedded", "WAREHOUSE": "duckdb", "GOOGLE_CLOUD_PROJECT": "p", "BIGQUERY_DATASET": "d", "BIGQUERY_LOCATION": "l"},
			want: []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cloud
			err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env))
			if diff := cmp.Diff(tt.want, c.Missing()); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if (err == nil) != (len(tt.want) == 0) {
				t.Errorf("Load = %v; want an error exactly when something is missing", err)
			}
		})
	}
}

func TestServingValidate(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		grace   time.Duration
		wantErr string // "" = valid
	}{
		{name: "defaults: 8 s, under Cloud Run's 10 s", grace: 8 * time.Second},
		{name: "a shorter grace", env: map[string]string{"SHUTDOWN_GRACE": "2s"}, grace: 2 * time.Second},
		{name: "the longest grace that leaves time for the cut and the close", env: map[string]string{"SHUTDOWN_GRACE": "8.5s"}, grace: 8500 * time.Millisecond},
		{name: "9.5 s plus the 1 s cut wait would outlive Cloud Run's 10 s", env: map[string]string{"SHUTDOWN_GRACE": "9.5s"}, wantErr: "at most 8.5s"},
		{name: "Cloud Run's whole 10 s leaves nothing for the cut", env: map[string]string{"SHUTDOWN_GRACE": "10s"}, wantErr: "SHUTDOWN_GRACE"},
		{name: "no grace", env: map[string]string{"SHUTDOWN_GRACE": "0s"}, wantErr: "SHUTDOWN_GRACE"},
		{name: "negative request timeout", env: map[string]string{"CLOUD_RUN_TIMEOUT_SECONDS": "-1"}, wantErr: "CLOUD_RUN_TIMEOUT_SECONDS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Serving
			err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env))
			if tt.wantErr == "" {
				if err != nil || c.ShutdownGrace != tt.grace {
					t.Errorf("grace %s, error %v; want %s and no error", c.ShutdownGrace, err, tt.grace)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestTickProblems(t *testing.T) {
	half := Tick{
		Interval: 30 * time.Second,
		Queue:    "projects/alpipe-dev-example/locations/europe-west1/queues/alpipe-ticks",
		URL:      "https://alpipe-watermark-123456789012.europe-west1.run.app",
		Invoker:  "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com",
	}
	decl := func(file string, e, ld time.Duration) aggregation.Declaration {
		return aggregation.Declaration{File: file, EarlyDelay: e, LateDelay: ld}
	}
	for _, tc := range []struct {
		name string
		tick Tick
		ds   []aggregation.Declaration
		want []string // substrings, one per problem
	}{
		{name: "default minute", tick: Tick{Interval: time.Minute}, ds: []aggregation.Declaration{decl("declarations/a.json", time.Minute, time.Minute)}},
		{name: "early 0s at any interval", tick: Tick{Interval: time.Minute}, ds: []aggregation.Declaration{decl("declarations/a.json", 0, time.Minute)}},
		{name: "half minute, 30s delays", tick: half, ds: []aggregation.Declaration{decl("declarations/a.json", 30*time.Second, 30*time.Second)}},
		{name: "30s delays on a minute deployment", tick: Tick{Interval: time.Minute},
			ds:   []aggregation.Declaration{decl("declarations/a.json", 30*time.Second, 30*time.Second)},
			want: []string{"declarations/a.json: early_delay 30s is shorter than TICK_INTERVAL=1m,", "declarations/a.json: late_delay 30s is shorter"}},
		{name: "other interval", tick: Tick{Interval: 15 * time.Second}, want: []string{"TICK_INTERVAL=15s: want 1m"}},
		{name: "half minute without a queue", tick: Tick{Interval: 30 * time.Second, URL: half.URL, Invoker: half.Invoker}, want: []string{"needs TICK_QUEUE"}},
		{name: "queue on a minute deployment", tick: Tick{Interval: time.Minute, Queue: half.Queue}, want: []string{"TICK_INTERVAL=1m schedules no follow-up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tick.problems(tc.ds)
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	if TickDeadline != time.Minute {
		t.Errorf("TickDeadline = %s, want 1m", TickDeadline)
	}
}
