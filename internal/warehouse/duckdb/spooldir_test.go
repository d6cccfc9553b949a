package duckdb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// files lists the names in dir, sorted.
func files(t *testing.T, dir string) (names []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("\"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRemovesStaleSpools: Open removes the spool files left in its
// temp folder, but not when another open warehouse uses the folder: a
// spool file there may be a Load in flight.
func TestOpenRemovesStaleSpools(t *testing.T) {
	tmp := t.TempDir()
	for _, f := range []string{"alpipe-load-123.csv", "alpipe-load-456.csv", "notes.csv"} {
		write(t, filepath.Join(tmp, f))
	}
	open(t, filepath.Join(t.TempDir(), "first.duckdb"), Options{TempDir: tmp})
	if diff := cmp.Diff([]string{spoolLockName, "notes.csv"}, files(t, tmp)); diff != "" {
		t.Errorf("temp folder after Open (-want +got):\n%s", diff)
	}
	inFlight := filepath.Join(tmp, "alpipe-load-789.csv")
	write(t, inFlight)
	open(t, filepath.Join(t.TempDir(), "second.duckdb"), Options{TempDir: tmp})
	if _, err := os.Stat(inFlight); err != nil {
		t.Errorf("the first warehouse's spool file: %v", err)
	}
}
