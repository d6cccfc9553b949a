package functions

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// testProcess builds the named functions from the embedded defaults over a
// fake GCS with the landing and quarantine buckets, on a clock the test
// sets.
func testProcess(t *testing.T, now *time.Time, env map[string]string, names ...string) *Process {
	t.Helper()
	p, err := Prepare(context.Background(), names, testOptions(t, func() time.Time { return *now }, env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// testOptions are the embedded defaults over a fake GCS with the landing
// and quarantine buckets, plus env.
func testOptions(t *testing.T, now func() time.Time, env map[string]string) setup.Options {
	t.Helper()
	fake, _ := objectstest.Fake(t, "", ingesttest.Landing, ingesttest.Quarantine)
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

// TestSweepLandingFailsWhenTheListingFails: 500, naming the sweep, so that
// the failure shows and the next call retries.
func TestSweepLandingFailsWhenTheListingFails(t *testing.T) {
	now := time.Now()
	// A landing bucket the fake does not have: the listing fails.
	p := testProcess(t, &now, map[string]string{"LANDING_BUCKET": "no-such-bucket"}, SweepLandingName)
	code, body := post(handler(t, p, SweepLandingName), []byte("{}"), false)
	if code != http.StatusInternalServerError || !strings.Contains(body, "sweep") {
		t.Errorf("status = %d %q, want 500 naming the sweep", code, body)
	}
}
