package fakegcs_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

const testBucket = "landing"

// TestConformance runs the objects conformance suite through objects.GCS
// against this fake (the live run is in package objects). Routed is how the
// local CLI runs: Handler under Paths, the client through
// STORAGE_EMULATOR_HOST.
func TestConformance(t *testing.T) {
	// Downloads stream: 0.1 MiB of heap growth measured on every run.
	kept := objectstest.Features{OldGenerations: objectstest.OldGenerationsKept, MaxHeapGrowth: 16 << 20}
	dropped := objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped, MaxHeapGrowth: 16 << 20}
	for _, tc := range []struct {
		name               string
		folder             bool
		features           objectstest.Features
		singleShot, routed bool
	}{
		{name: "memory", features: kept},
		{name: "filesystem", folder: true, features: dropped},
		{name: "filesystem single-shot", folder: true, features: dropped, singleShot: true},
		{name: "routed filesystem", folder: true, features: dropped, routed: true},
		{name: "routed memory", features: kept, routed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objectstest.RunWithFeatures(t, tc.features, func(t *testing.T) (*objects.GCS, string) {
				dir := ""
				if tc.folder {
					dir = t.TempDir()
				}
				l, g := objectstest.Fake(t, dir, testBucket)
				if tc.routed {
					g = routed(t, l)
				}
				if tc.singleShot {
					g = g.WithChunkSize(0)
				}
				return g, testBucket
			})
		})
	}
}

// routed serves l's Handler under Paths on a socket and returns the
// production client that STORAGE_EMULATOR_HOST points there; a request
// outside Paths fails the test.
func routed(t *testing.T, l *fakegcs.Server) *objects.GCS {
	mux := http.NewServeMux()
	for _, p := range fakegcs.Paths() {
		mux.Handle(p, l.Handler())
	}
	var (
		mu    sync.Mutex
		stray []string
	)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		stray = append(stray, r.Method+" "+r.URL.String())
		http.Error(w, "not a storage path", http.StatusTeapot)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(stray) > 0 {
			t.Errorf("client used paths outside Paths: %v", stray)
		}
	})
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL, "http://"))
	c, err := objects.NewClient(t.Context())
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := objects.NewGCS(c)
	if err != nil {
		t.Fatalf("NewGCS: %v", err)
	}
	return g
}
