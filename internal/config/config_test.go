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
	type env = map[string]string
	tests := []struct {
		name    string
		cfg     Validator
		env     env
		wantErr []string // substrings; none means valid
	}{
		{"ingest defaults are valid locally", &Ingest{}, nil, nil},
		{"orders defaults are valid locally", &Orders{}, nil, nil},
		{"watermark defaults are valid locally", &Watermark{}, nil, nil},
		{"sweep defaults are valid locally", &Sweep{}, nil, nil},
		{"server defaults are valid", &Server{}, nil, nil},
		{"bigquery without project, dataset or staging", &Ingest{}, env{"WAREHOUSE": "bigquery", "BIGQUERY_DATASET": ""},
			[]string{"WAREHOUSE=bigquery needs GOOGLE_CLOUD_PROJECT", "WAREHOUSE=bigquery needs STAGING_BUCKET"}},
		{"embedded state on Cloud Run", &Orders{}, env{"K_SERVICE": "alpipe-orders"},
			[]string{"STATE_STORE=embedded keeps state in one instance's local file"}},
		{"embedded state with BigQuery", &Ingest{}, env{"WAREHOUSE": "bigquery", "GOOGLE_CLOUD_PROJECT": "p", "STAGING_BUCKET": "s"},
			[]string{"STATE_STORE=embedded keeps state in one instance's local file"}},
		{"firestore without project", &Orders{}, env{"STATE_STORE": "firestore"}, []string{"STATE_STORE=firestore needs GOOGLE_CLOUD_PROJECT"}},
		{"unknown backends", &Watermark{}, env{"STATE_STORE": "redis", "WAREHOUSE": "sqlite"}, []string{`STATE_STORE="redis"`, `WAREHOUSE="sqlite"`}},
		{"lease shorter than the event deadline", &Ingest{}, env{"LEDGER_LEASE": "5m"}, []string{"LEDGER_LEASE=5m0s must exceed the 540s function deadline"}},
		{"bad window settings are all reported", &Orders{}, env{"AGGREGATIONS": "ventas_dia,ventas_hora_pais"},
			[]string{`AGGREGATIONS: aggregation "ventas_dia" is not declared (declared: sesiones_cliente, ventas_hora_pais, ventas_sku_hora_movil)`}},
		{"ingest deadline without a margin below the request timeout", &Ingest{}, env{"INGEST_DEADLINE": "540s"},
			[]string{"INGEST_DEADLINE=9m0s must be positive and at most 8m30s"}},
		{"no landing area", &Ingest{}, env{"LANDING_BUCKET": "", "LANDING_PREFIXES": ""}, []string{"LANDING_BUCKET is empty", "LANDING_PREFIXES is empty"}},
		{"quarantine inside the landing area", &Ingest{}, env{"QUARANTINE_BUCKET": "alpinashop-catalogo", "QUARANTINE_PREFIX": "exportaciones/cuarentena/"},
			[]string{`QUARANTINE_PREFIX="exportaciones/cuarentena/" lies inside LANDING_PREFIXES`}},
		{"sweep window inside its grace", &Sweep{}, env{"SWEEP_WINDOW": "10m", "SWEEP_MAX_OBJECTS": "0", "SWEEP_CONCURRENCY": "99"},
			[]string{"SWEEP_WINDOW=10m0s must exceed SWEEP_GRACE=30m0s", "SWEEP_MAX_OBJECTS=0", "SWEEP_CONCURRENCY=99"}},
		{"test clock against real Firestore", &Server{}, env{"ALPIPE_CLOCK_FILE": "/tmp/now", "PORT": "http"}, []string{"ALPIPE_CLOCK_FILE is a test clock", `PORT="http"`}},
		{"firestore database and bigquery names the services would refuse", &Orders{}, env{"STATE_STORE": "firestore", "GOOGLE_CLOUD_PROJECT": "p",
			"FIRESTORE_DATABASE": "Alpipe_DB", "WAREHOUSE": "bigquery", "BIGQUERY_DATASET": "alpinashop-analitica", "BIGQUERY_EMULATOR_HOST": "localhost"},
			[]string{`FIRESTORE_DATABASE="Alpipe_DB"`, `BIGQUERY_DATASET (letters, digits and '_', at most 1024), got "alpinashop-analitica"`, `BIGQUERY_EMULATOR_HOST="localhost"`}},
		{"an unknown warehouse", &Watermark{}, env{"WAREHOUSE": "remote"}, []string{`WAREHOUSE="remote": want duckdb or bigquery`}},
		{"stream services need no staging bucket", &Orders{}, env{"WAREHOUSE": "bigquery", "STATE_STORE": "firestore",
			"GOOGLE_CLOUD_PROJECT": "alpinashop-datos", "FIRESTORE_DATABASE": "alpipe", "K_SERVICE": "alpipe-orders"}, nil},
		{"production settings", &Ingest{}, env{"WAREHOUSE": "bigquery", "STATE_STORE": "firestore", "GOOGLE_CLOUD_PROJECT": "alpinashop-datos",
			"STAGING_BUCKET": "alpinashop-staging"}, nil},
		{"the longest grace that leaves time for the cut and the close", &Serving{}, env{"SHUTDOWN_GRACE": "8.5s"}, nil},
		{"9.5 s plus the 1 s cut wait would outlive Cloud Run's 10 s", &Serving{}, env{"SHUTDOWN_GRACE": "9.5s"},
			[]string{"at most 8.5s"}},
		{"Cloud Run's whole 10 s leaves nothing for the cut", &Serving{},
			env{"SHUTDOWN_GRACE": "10s"}, []string{"SHUTDOWN_GRACE"}},
		{"no grace", &Serving{}, env{"SHUTDOWN_GRACE": "0s"}, []string{"SHUTDOWN_GRACE"}},
		{"negative request timeout", &Serving{}, env{"CLOUD_RUN_TIMEOUT_SECONDS": "-1"}, []string{"CLOUD_RUN_TIMEOUT_SECONDS"}},
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
	var c Serving // 8 s: under Cloud Run's 10 s
	if err := Load(context.Background(), &c, envconfig.MapLookuper(nil)); err != nil || c.ShutdownGrace != 8*time.Second {
		t.Errorf("default SHUTDOWN_GRACE %s (%v), want 8s", c.ShutdownGrace, err)
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
	all := []string{"sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unset runs all", map[string]string{}, all},
		{"empty runs all", map[string]string{"AGGREGATIONS": ""}, all},
		{"one", map[string]string{"AGGREGATIONS": "ventas_sku_hora_movil"}, []string{"ventas_sku_hora_movil"}},
	} {
		var c Watermark
		if err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range c.Specs() {
			got = append(got, s.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
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
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(f, "_test.go") {
			src += string(b)
		}
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
	type env = map[string]string
	tests := []struct {
		name string
		env  env
		want []string
	}{
		{"deployed", env{"STATE_STORE": "firestore", "WAREHOUSE": "bigquery", "GOOGLE_CLOUD_PROJECT": "p", "BIGQUERY_DATASET": "d",
			"BIGQUERY_LOCATION": "europe-west1"}, nil},
		{"nothing set", env{}, []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery", "GOOGLE_CLOUD_PROJECT", "BIGQUERY_DATASET", "BIGQUERY_LOCATION"}},
		{"the laptop's backends", env{"STATE_STORE": "embedded", "WAREHOUSE": "duckdb", "GOOGLE_CLOUD_PROJECT": "p", "BIGQUERY_DATASET": "d",
			"BIGQUERY_LOCATION": "l"}, []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery"}},
	}
	for _, tt := range tests {
		var c Cloud
		err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env))
		if diff := cmp.Diff(tt.want, c.Missing()); diff != "" {
			t.Errorf("%s: missing (-want +got):\n%s", tt.name, diff)
		}
		if (err == nil) != (len(tt.want) == 0) {
			t.Errorf("%s: Load = %v; want an error exactly when something is missing", tt.name, err)
		}
	}
}

func TestTickProblems(t *testing.T) {
	half := Tick{
		Interval: 30 * time.Second,
		Queue:    "projects/alpipe-dev-example/locations/europe-west1/queues/alpipe-ticks",
		URL:      "https://alpipe-watermark-123456789012.europe-west1.run.app",
		Invoker:  "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com",
	}
	decl := func(e, ld time.Duration) []aggregation.Declaration {
		spec := window.Spec{EarlyDelay: e, LateDelay: ld}
		return []aggregation.Declaration{{File: "declarations/a.json", Spec: spec}}
	}
	minute := Tick{Interval: time.Minute}
	for _, tc := range []struct {
		name string
		tick Tick
		ds   []aggregation.Declaration
		want []string // substrings, one per problem
	}{
		{"default minute", minute, decl(time.Minute, time.Minute), nil},
		{"early 0s at any interval", minute, decl(0, time.Minute), nil},
		{"half minute, 30s delays", half, decl(30*time.Second, 30*time.Second), nil},
		{"30s delays on a minute deployment", minute, decl(30*time.Second, 30*time.Second),
			[]string{"declarations/a.json: early_delay 30s is shorter than TICK_INTERVAL=1m,", "declarations/a.json: late_delay 30s is shorter"}},
		{"other interval", Tick{Interval: 15 * time.Second}, nil, []string{"TICK_INTERVAL=15s: want 1m"}},
		{"half minute without a queue", Tick{Interval: 30 * time.Second, URL: half.URL, Invoker: half.Invoker}, nil, []string{"needs TICK_QUEUE"}},
		{"queue on a minute deployment", Tick{Interval: time.Minute, Queue: half.Queue}, nil, []string{"TICK_INTERVAL=1m schedules no follow-up"}},
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
