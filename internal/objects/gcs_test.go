package objects_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

const testBucket = "landing"

// fsHeapBound is what a 50 MiB round trip may add to the heap with the
// filesystem fake in-process: the client's one upload chunk, copy buffers
// and garbage not yet collected. Whole-object buffering anywhere (the fake's
// own upload path holds two to three copies) exceeds it many times over.
const fsHeapBound = 40 << 20

func startLocal(t *testing.T, dir string) *objects.Local {
	t.Helper()
	l, err := objects.StartLocal(dir, testBucket)
	if err != nil {
		t.Fatalf("StartLocal: %v", err)
	}
	t.Cleanup(l.Close)
	return l
}

func storeFor(t *testing.T, l *objects.Local) *objects.GCS {
	t.Helper()
	c, err := l.Client(t.Context())
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := objects.NewGCS(c)
	if err != nil {
		t.Fatalf("NewGCS: %v", err)
	}
	return g
}

// The memory backend keeps old generations: its buckets are versioned.
func TestConformanceFakeMemory(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsKept},
		func(t *testing.T) (*objects.GCS, string) {
			return storeFor(t, startLocal(t, "")), testBucket
		})
}

// The filesystem backend keeps only the live generation, and must stream.
func TestConformanceFakeFilesystem(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped, MaxHeapGrowth: fsHeapBound},
		func(t *testing.T) (*objects.GCS, string) {
			return storeFor(t, startLocal(t, t.TempDir())), testBucket
		})
}

// Single-shot uploads (no chunk buffer) take the multipart path of the fake.
func TestConformanceFakeFilesystemSingleShot(t *testing.T) {
	objectstest.RunWithFeatures(t, objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped, MaxHeapGrowth: fsHeapBound},
		func(t *testing.T) (*objects.GCS, string) {
			return storeFor(t, startLocal(t, t.TempDir())).WithChunkSize(0), testBucket
		})
}

func TestConformanceLiveGCS(t *testing.T) {
	project, bucket := os.Getenv("GOOGLE_CLOUD_PROJECT"), os.Getenv("OBJECTS_TEST_BUCKET")
	if project == "" || bucket == "" || testing.Short() {
		t.Skip("live Cloud Storage suite skipped: set GOOGLE_CLOUD_PROJECT and OBJECTS_TEST_BUCKET (a bucket the credentials may write) and run without -short")
	}
	objectstest.Run(t, func(t *testing.T) (*objects.GCS, string) {
		c, err := objects.NewClient(t.Context())
		if err != nil {
			t.Fatalf("NewClient: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		g, err := objects.NewGCS(c)
		if err != nil {
			t.Fatalf("NewGCS: %v", err)
		}
		return g, bucket
	})
}

// TestEmulatorHostRouting is how the local CLI runs: serve mounts Handler
// under LocalPaths beside the functions on one address, and other processes
// build the production client with only STORAGE_EMULATOR_HOST set. The whole
// suite runs through that route.
func TestEmulatorHostRouting(t *testing.T) {
	for _, backend := range []struct {
		name     string
		dir      func(t *testing.T) string
		features objectstest.Features
	}{
		{"filesystem", func(t *testing.T) string { return t.TempDir() },
			objectstest.Features{OldGenerations: objectstest.OldGenerationsDropped, MaxHeapGrowth: fsHeapBound}},
		{"memory", func(t *testing.T) string { return "" },
			objectstest.Features{OldGenerations: objectstest.OldGenerationsKept}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			objectstest.RunWithFeatures(t, backend.features, func(t *testing.T) (*objects.GCS, string) {
				l := startLocal(t, backend.dir(t))
				mux := http.NewServeMux()
				for _, p := range objects.LocalPaths() {
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
						t.Errorf("client used paths outside LocalPaths: %v", stray)
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

// Local.Client must reach its own fake even when the environment points
// the library at another emulator.
func TestLocalClientIgnoresEmulatorHost(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	g := storeFor(t, startLocal(t, t.TempDir()))
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

func TestNewGCSRejectsNilClient(t *testing.T) {
	if _, err := objects.NewGCS(nil); err == nil {
		t.Error("NewGCS(nil) = nil error, want one")
	}
}
