package fakegcs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStartSweepsInterruptedWrites: objects survive a restart, and Start
// removes the temporary files a write cut by the process's end leaves.
func TestStartSweepsInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	l, g := startFS(t, dir)
	a := put(t, g, "exportaciones/a.csv", "persisted")
	put(t, g, "exportaciones/.b.csv2", "an object whose name looks like a temporary file")
	l.Close()
	stray := filepath.Join(dir, "buckets", bucket, "exportaciones", ".c.csv1234567")
	if err := os.WriteFile(stray, []byte("half a fi"), 0o600); err != nil {
		t.Fatal(err)
	}

	_, g = startFS(t, dir)
	var names []string
	for a, err := range g.List(t.Context(), bucket, "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"exportaciones/.b.csv2", "exportaciones/a.csv"}, names); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted write's file is still there: %v", err)
	}
	r, err := g.Open(t.Context(), bucket, "exportaciones/a.csv", a.Generation)
	if err != nil {
		t.Fatalf("Open after restart: %v", err)
	}
	defer r.Close()
	if b, _ := io.ReadAll(r); string(b) != "persisted" {
		t.Errorf("content after restart %q", b)
	}
}
