package objectstest

import (
	"context"
	"testing"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
)

// Fake starts the local fake holding buckets, in memory (dir "") or in the
// folder dir, and returns it with the production adapter over its client;
// both close when the test ends.
func Fake(t testing.TB, dir string, buckets ...string) (*fakegcs.Server, *objects.GCS) {
	t.Helper()
	srv, err := fakegcs.Start(dir, buckets...)
	if err != nil {
		t.Fatalf("fakegcs.Start: %v", err)
	}
	t.Cleanup(srv.Close)
	c, err := srv.Client(context.Background())
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	g, err := objects.NewGCS(c)
	if err != nil {
		t.Fatalf("NewGCS: %v", err)
	}
	return srv, g
}
