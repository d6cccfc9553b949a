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

// The objects conformance suite, run by the production adapter (objects.GCS)
// against this fake: the fake is held to what Cloud Storage does, and the
// adapter is tested without a project. The live run is in package objects.

const testBucket = "landing"

func storeOn(t *testing.T, dir string) *objects.GCS {
	_, g := objectstest.Fake(t, dir, testBucket)
	return g
}

// The memory backend keeps old generations: its buckets are versioned.
func TestConformanceFakeMemory(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsKept},
		func(t *testing.T) (*objects.GCS, string) {
			return storeOn(t, ""), testBucket
		})
}

// The filesystem backend keeps only the live generation. It sets no
// MaxHeapGrowth: the fake holds an upload in memory (see the package
// comment), so the heap follows the object's size.
func TestConformanceFakeFilesystem(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped},
		func(t *testing.T) (*objects.GCS, string) {
			return storeOn(t, t.TempDir()), testBucket
		})
}

// Single-shot uploads (no chunk buffer) take the multipart path of the fake.
func TestConformanceFakeFilesystemSingleShot(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped},
		func(t *testing.T) (*objects.GCS, string) {
			return storeOn(t, t.TempDir()).WithChunkSize(0), testBucket
		})
}

// TestEmulatorHostRouting is how the local CLI runs: serve mounts Handler
// under Paths beside the functions on one address, and other processes
// build the production client with only STORAGE_EMULATOR_HOST set. The whole
// suite runs through that route.
func TestEmulatorHostRouting(t *testing.T) {
	for _, backend := range []struct {
		name     string
		dir      func(t *testing.T) string
		features objectstest.Features
	}{
		{"filesystem", func(t *testing.T) string { return t.TempDir() },
			objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped}},
		{"memory", func(t *testing.T) string { return "" },
			objectstest.Features{OldGenerations: objectstest.OldGenerationsKept}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			objectstest.RunWithFeatures(t, backend.features, func(t *testing.T) (*objects.GCS, string) {
				l, _ := objectstest.Fake(t, backend.dir(t), testBucket)
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
				return g, testBucket
			})
		})
	}
}

// Server.Client must reach its own fake even when the environment points
// the library at another emulator.
func TestClientIgnoresEmulatorHost(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	g := storeOn(t, t.TempDir())
	w := g.Create(t.Context(), testBucket, "x.csv", "text/csv", nil)
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := g.Stat(t.Context(), testBucket, "x.csv"); err != nil {
		t.Errorf("Stat: %v", err)
	}
}
