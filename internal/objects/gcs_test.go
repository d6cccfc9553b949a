package objects_test

import (
	"os"
	"testing"

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
	// Single-shot too: whether an aborted multipart request (closing
	// boundary sent, body never ended) stays uncommitted is Cloud Storage's
	// behaviour to confirm, which the fake copies (see gcsWriter.Abort).
	for _, tc := range []struct {
		name  string
		chunk int
	}{{"resumable", objects.DefaultChunkSize}, {"single-shot", 0}} {
		t.Run(tc.name, func(t *testing.T) {
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
