package setup_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

func load[C any, P interface {
	*C
	config.Validator
}](t *testing.T, env map[string]string) C {
	t.Helper()
	var c C
	if err := config.Load(context.Background(), P(&c), envconfig.MapLookuper(env)); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPlanRefusesTwoSetsOfClients: the functions of one process share one
// client per backend and one instance of each service, so a plan refuses
// two functions that configure either differently instead of opening a
// second one.
func TestPlanRefusesTwoSetsOfClients(t *testing.T) {
	base := map[string]string{"ALPIPE_DATA_DIR": "a"}
	other := map[string]string{"ALPIPE_DATA_DIR": "b"}
	ingestA := load[config.Ingest](t, base)
	ingestB := load[config.Ingest](t, other)
	ingestQ := load[config.Ingest](t, map[string]string{"ALPIPE_DATA_DIR": "a", "QUARANTINE_BUCKET": "otro"})
	orders := load[config.Orders](t, base)
	watermark := load[config.Watermark](t, base)
	watermarkB := load[config.Watermark](t, other)
	sweep := load[config.Sweep](t, base)
	sweepLate := load[config.Sweep](t, map[string]string{"ALPIPE_DATA_DIR": "a", "SWEEP_GRACE": "1h"})

	type step = func(*setup.Plan) error
	ingest := func(c config.Ingest) step { return func(p *setup.Plan) error { return p.Ingest(c) } }
	watermarkStream := func(c config.Watermark) step {
		return func(p *setup.Plan) error { return p.Stream(c.Backends, c.Window, c.Stream) }
	}
	sweepOf := func(c config.Sweep) step { return func(p *setup.Plan) error { return p.Sweep(c) } }
	tests := []struct {
		name    string
		steps   []step
		wantErr string // "" = every step accepted
	}{
		{"every function of one environment", []step{ingest(ingestA),
			func(p *setup.Plan) error { return p.Stream(orders.Backends, orders.Window, orders.Stream) }, watermarkStream(watermark), sweepOf(sweep)}, ""},
		{"another data folder", []step{ingest(ingestA), watermarkStream(watermarkB)}, "different backends"},
		{"another ingest service", []step{ingest(ingestA), ingest(ingestQ)}, "ingest service differently"},
		{"the sweeper's ingest differs from IngestCSV's", []step{ingest(ingestB), sweepOf(sweep)}, "different backends"},
		{"two sweepers", []step{sweepOf(sweep), sweepOf(sweepLate)}, "sweeper differently"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p setup.Plan
			var err error
			for _, step := range tt.steps {
				if err = step(&p); err != nil {
					break
				}
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v; want one saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestBuildBuildsWhatThePlanNames: a process builds exactly the parts its
// functions need, up front, and a report over a process without a part says
// which part it lacks (a nil field must not reach it as a non-nil
// interface).
func TestBuildBuildsWhatThePlanNames(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	type parts struct{ Objects, Store, Warehouse, Ledger, Ingest, Stream, Sweeper bool }
	tests := []struct {
		name         string
		plan         func(t *testing.T, p *setup.Plan, env map[string]string) error
		want         parts
		wantProblems []string
	}{
		{"no function", func(*testing.T, *setup.Plan, map[string]string) error { return nil }, parts{},
			[]string{"files: no ledger in this process", "stream: no stream processor in this process", "discarded: no warehouse in this process"}},
		{"the stream alone", func(t *testing.T, p *setup.Plan, env map[string]string) error {
			c := load[config.Watermark](t, env)
			return p.Stream(c.Backends, c.Window, c.Stream)
		}, parts{Store: true, Warehouse: true, Stream: true}, []string{"files: no ledger in this process"}},
		{"the sweeper alone", func(t *testing.T, p *setup.Plan, env map[string]string) error {
			return p.Sweep(load[config.Sweep](t, env))
		},
			parts{Objects: true, Store: true, Warehouse: true, Ledger: true, Ingest: true, Sweeper: true}, []string{"stream: no stream processor in this process"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var plan setup.Plan
			if err := tt.plan(t, &plan, map[string]string{"ALPIPE_DATA_DIR": t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			app, err := setup.Build(context.Background(), plan, setup.Options{
				Logger: logging.Discard(),
				EmbeddedWarehouse: func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
					return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{TempDir: filepath.Join(b.DataDir, "tmp")})
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()
			got := parts{app.Objects != nil, app.Store != nil, app.Warehouse != nil, app.Ledger != nil, app.Ingest != nil, app.Stream != nil, app.Sweeper != nil}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts built (-want +got):\n%s", diff)
			}
			rep := status.BuildReport(context.Background(), app.StatusSources(), status.Options{})
			if diff := cmp.Diff(tt.wantProblems, rep.Problems); diff != "" {
				t.Errorf("report problems (-want +got):\n%s", diff)
			}
		})
	}
}
