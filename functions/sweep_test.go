package functions

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/sweep"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// sweepApp provides the process with SweepLanding built from the embedded
// defaults over a fake GCS, on a clock the test sets.
func sweepApp(t *testing.T, now *time.Time, env map[string]string) *objects.GCS {
	t.Helper()
	gcs, p := testProcess(t, now, env, SweepLandingName)
	sweeper = handler(t, p, SweepLandingName)
	return gcs
}

// sweeper is the SweepLanding handler the last sweepApp built.
var sweeper http.Handler

// testProcess builds the named functions from the embedded defaults over a
// fake GCS with the landing and quarantine buckets, on a clock the test
// sets.
func testProcess(t *testing.T, now *time.Time, env map[string]string, names ...string) (*objects.GCS, *Process) {
	t.Helper()
	opts := testOptions(t, func() time.Time { return *now }, env)
	p, err := Prepare(context.Background(), names, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	gcs, err := objects.NewGCS(opts.Storage)
	if err != nil {
		t.Fatal(err)
	}
	return gcs, p
}

// testOptions are the embedded defaults over a fake GCS with the landing
// and quarantine buckets, plus env.
func testOptions(t *testing.T, now func() time.Time, env map[string]string) setup.Options {
	t.Helper()
	fake, err := fakegcs.Start("", ingesttest.Landing, ingesttest.Quarantine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := fake.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	lookup := map[string]string{"ALPIPE_DATA_DIR": t.TempDir()}
	maps.Copy(lookup, env)
	return setup.Options{
		Lookup:  envconfig.MapLookuper(lookup),
		Now:     now,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Storage: client,
		EmbeddedWarehouse: func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
			return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{TempDir: filepath.Join(b.DataDir, "tmp")})
		},
	}
}

// handler is the built handler of the named function of p.
func handler(t *testing.T, p *Process, name string) http.Handler {
	t.Helper()
	for _, h := range p.Handlers {
		if h.Name == name {
			return h.Handler
		}
	}
	t.Fatalf("%s was not built", name)
	return nil
}

func callSweep(t *testing.T) (int, sweep.Summary) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer oidc-token")
	req.Header.Set("Content-Type", "application/json") // as terraform/scheduler.tf sends it
	sweeper.ServeHTTP(rec, req)
	var sum sweep.Summary
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &sum); err != nil {
			t.Fatalf("body %q: %v", rec.Body.String(), err)
		}
	}
	return rec.Code, sum
}

func TestSweepLandingLoadsAFileItsEventMissed(t *testing.T) {
	var now time.Time
	gcs := sweepApp(t, &now, nil)
	a := ingesttest.Put(t, gcs, ingesttest.Landing, "exportaciones/2026/03/14/pedidos.csv",
		"pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\nP-1,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n", nil)

	type counts struct{ Code, Found, Ingested, Failed, Skipped int }
	call := func() counts {
		code, s := callSweep(t)
		return counts{code, s.Found, s.Ingested, s.Failed, s.Skipped}
	}
	now = a.Created.Add(5 * time.Minute)
	if diff := cmp.Diff(counts{Code: 200}, call()); diff != "" {
		t.Errorf("within the grace period (-want +got):\n%s", diff)
	}
	now = a.Created.Add(31 * time.Minute)
	if diff := cmp.Diff(counts{Code: 200, Found: 1, Ingested: 1}, call()); diff != "" {
		t.Errorf("after the grace period (-want +got):\n%s", diff)
	}
	now = now.Add(15 * time.Minute)
	if diff := cmp.Diff(counts{Code: 200}, call()); diff != "" {
		t.Errorf("next run (-want +got):\n%s", diff)
	}
}

func TestSweepLandingStatus(t *testing.T) {
	t.Run("listing fails", func(t *testing.T) {
		now := time.Now()
		// A landing bucket the fake does not have: the listing fails.
		sweepApp(t, &now, map[string]string{"LANDING_BUCKET": "no-such-bucket"})
		rec := httptest.NewRecorder()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")).WithContext(ctx)
		req.Header.Set("Content-Type", "application/json")
		sweeper.ServeHTTP(rec, req)
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "sweep") {
			t.Errorf("status = %d %q, want 500 naming the sweep", rec.Code, rec.Body.String())
		}
	})
}
