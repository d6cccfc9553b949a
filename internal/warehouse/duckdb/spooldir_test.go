package duckdb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// files lists the names in dir, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("\"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRemovesStaleSpools(t *testing.T) {
	tmp := t.TempDir()
	write(t, filepath.Join(tmp, "alpipe-load-123.csv"))
	write(t, filepath.Join(tmp, "alpipe-load-456.csv"))
	write(t, filepath.Join(tmp, "notes.csv"))
	open(t, filepath.Join(t.TempDir(), "wh.duckdb"), Options{TempDir: tmp})
	if diff := cmp.Diff([]string{spoolLockName, "notes.csv"}, files(t, tmp)); diff != "" {
		t.Errorf("temp folder after Open (-want +got):\n%s", diff)
	}
}

// TestOpenKeepsSpoolsInUse opens a second warehouse on a temp folder that
// an open one uses: the spool file there may be a Load in flight.
func TestOpenKeepsSpoolsInUse(t *testing.T) {
	tmp := t.TempDir()
	open(t, filepath.Join(t.TempDir(), "first.duckdb"), Options{TempDir: tmp})
	inFlight := filepath.Join(tmp, "alpipe-load-789.csv")
	write(t, inFlight)
	open(t, filepath.Join(t.TempDir(), "second.duckdb"), Options{TempDir: tmp})
	if _, err := os.Stat(inFlight); err != nil {
		t.Errorf("the first warehouse's spool file: %v", err)
	}
}

// TestFailedLoadLeavesNoSpool fails a Load once a spool file has been
// inserted and while the next one is being written.
func TestFailedLoadLeavesNoSpool(t *testing.T) {
	tmp := t.TempDir()
	w := open(t, filepath.Join(t.TempDir(), "wh.duckdb"), Options{TempDir: tmp})
	src := &failAfter{RowSource: warehousetest.OrderLines(spoolRows*2, "x.csv", 1), n: spoolRows + 1000}
	if _, err := w.Load(context.Background(), warehouse.Load{ID: "fails", Table: warehouse.LineasPedido, Rows: src}); !errors.Is(err, errBroke) {
		t.Fatalf("Load: got %v, want %v", err, errBroke)
	}
	if diff := cmp.Diff([]string{spoolLockName}, files(t, tmp)); diff != "" {
		t.Errorf("temp folder after a failed Load (-want +got):\n%s", diff)
	}
}
