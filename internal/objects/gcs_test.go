package objects_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

// The conformance suite against the local fake runs in package fakegcs
// (go test ./internal/objects/...); this is the run against a real bucket.
func TestConformanceLiveGCS(t *testing.T) {
	project, bucket := os.Getenv("GOOGLE_CLOUD_PROJECT"), os.Getenv("OBJECTS_TEST_BUCKET")
	if project == "" || bucket == "" || testing.Short() {
		t.Skip("live Cloud Storage suite skipped: set GOOGLE_CLOUD_PROJECT and OBJECTS_TEST_BUCKET (a bucket the credentials may write) and run without -short")
	}
	// Single-shot confirms the fake's copy of Cloud Storage on an aborted
	// multipart request (gcsWriter.Abort).
	for _, tc := range []struct {
		name  string
		chunk int
	}{{"resumable", objects.DefaultChunkSize}, {"single-shot", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			objectstest.RunWithFeatures(t, objectstest.Features{}, func(t *testing.T) (*objects.GCS, string) {
				c, err := objects.NewClient(t.Context())
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				t.Cleanup(func() { c.Close() })
				g, err := objects.NewGCS(c)
				if err != nil {
					t.Fatalf("NewGCS: %v", err)
				}
				return g.WithChunkSize(tc.chunk), bucket
			})
		})
	}
}

func TestNewGCSRejectsNilClient(t *testing.T) {
	if _, err := objects.NewGCS(nil); err == nil {
		t.Error("NewGCS(nil) = nil error, want one")
	}
}

// TestOpenInflatesStoredGzip pins that Open returns an object stored with
// Content-Encoding: gzip inflated by Go's transport, and that
// ReadCompressed(true) is refused on JSON reads: a library upgrade that
// lifts it fails here, and Open can switch to the stored bytes.
func TestOpenInflatesStoredGzip(t *testing.T) {
	const bucket = "gzip-test"
	var plain bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&plain, "PED-%d,1,2026-03-22,BOTA,1,12.00,CLI,ES\n", i)
	}
	var stored bytes.Buffer
	zw := gzip.NewWriter(&stored)
	if _, err := zw.Write(plain.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string // "" = the fake's memory backend, as the stack runs it
	}{{"memory", ""}, {"folder", t.TempDir()}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, g := objectstest.Fake(t, tc.dir, bucket)
			c, err := srv.Client(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			obj := c.Bucket(bucket).Object("pedidos.csv")
			w := obj.NewWriter(t.Context())
			w.ContentType = "text/csv"
			w.ContentEncoding = "gzip"
			if _, err := w.Write(stored.Bytes()); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := g.Open(t.Context(), bucket, "pedidos.csv", w.Attrs().Generation)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain.Bytes()) {
				t.Errorf("Open returned %d bytes starting %q, want the %d inflated bytes (stored: %d)", len(got), got[:min(len(got), 16)], plain.Len(), stored.Len())
			}
			sr, ok := r.(*storage.Reader)
			if !ok {
				t.Fatalf("Open returned a %T, want the library's reader", r)
			}
			if !sr.Attrs.Decompressed {
				t.Error("Attrs.Decompressed = false: the inflation did not happen in the client")
			}

			_, err = obj.ReadCompressed(true).NewReader(t.Context())
			if err == nil || !strings.Contains(err.Error(), "custom Accept-Encoding headers not allowed") {
				t.Errorf("ReadCompressed(true) on a JSON read: err %v; if the library now allows it, make Open read the stored bytes", err)
			}
		})
	}
}
