package fakegcs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStartSweepsInterruptedWrites: the filesystem backend writes a file
// through a temporary one (".<name><digits>"), which a process that ends
// mid-write leaves behind without attributes, and then every listing of its
// bucket answers 404. Start removes such files, and nothing else.
func TestStartSweepsInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	l, g := startFS(t, dir)
	put(t, g, "exportaciones/a.csv", "a")
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
}
