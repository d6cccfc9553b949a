package functions

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
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

func TestSweepLandingLoadsAFileItsEventMissed(t *testing.T) {
	var now time.Time
	gcs, p := testProcess(t, &now, nil, SweepLandingName)
	h := handler(t, p, SweepLandingName)
	a := ingesttest.Put(t, gcs, ingesttest.Landing, "exportaciones/2026/03/14/pedidos.csv",
		"pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\nP-1,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n", nil)

	type counts struct{ Code, Found, Ingested, Failed, Skipped int }
	call := func() counts {
		// A JSON body, as terraform/scheduler.tf sends it.
		code, body := post(h, []byte("{}"), false)
		var s sweep.Summary
		if code == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &s); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
		}
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

// TestSweepLandingFailsWhenTheListingFails: 500, naming the sweep, so that
// the failure shows and the next call retries.
func TestSweepLandingFailsWhenTheListingFails(t *testing.T) {
	now := time.Now()
	// A landing bucket the fake does not have: the listing fails.
	_, p := testProcess(t, &now, map[string]string{"LANDING_BUCKET": "no-such-bucket"}, SweepLandingName)
	code, body := post(handler(t, p, SweepLandingName), []byte("{}"), false)
	if code != http.StatusInternalServerError || !strings.Contains(body, "sweep") {
		t.Errorf("status = %d %q, want 500 naming the sweep", code, body)
	}
}
