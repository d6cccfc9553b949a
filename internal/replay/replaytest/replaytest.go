// Package replaytest holds the fixtures the tests of the batch side of the
// pipeline share: a DuckDB warehouse private to a test, lineas_pedido rows
// loaded into it as the ingest would, and golden files. The replay reads
// those rows back as orders, and reconcile compares them with the panes.
package replaytest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// OpenWarehouse opens an in-memory DuckDB, closed when the test ends.
func OpenWarehouse(t testing.TB) *duckdb.Warehouse {
	t.Helper()
	w, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open DuckDB: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// Golden compares got with the golden file at path, rewriting the file first
// when the test binary runs with -update.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
