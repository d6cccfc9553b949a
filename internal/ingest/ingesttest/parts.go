// Package ingesttest builds what an ingest.Service runs on in tests from
// real embedded engines, the same for every package: the fake GCS, the bolt
// ledger, an in-memory DuckDB and the default feeds.
package ingesttest

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// The buckets of the ERP drops and of the rejected rows, as deployed.
const (
	Landing    = "alpinashop-catalogo"
	Quarantine = "alpinashop-cuarentena"
)

// Parts are the ports of an ingest.Service on real engines, private to one
// test and closed when it ends.
type Parts struct {
	GCS       *objects.GCS
	Store     *boltstore.Store
	Ledger    *ledger.Ledger
	Warehouse *duckdb.Warehouse
	Feeds     *contract.Registry
}

// NewParts starts the parts, with the given buckets created empty in the
// fake GCS.
func NewParts(t testing.TB, buckets ...string) *Parts {
	t.Helper()
	return newParts(t, "", buckets...)
}

// NewDiskParts is NewParts with the fake GCS storing objects as files, as
// `alpipe serve` does: a name the file system cannot hold fails there.
func NewDiskParts(t testing.TB, buckets ...string) *Parts {
	t.Helper()
	return newParts(t, t.TempDir(), buckets...)
}

func newParts(t testing.TB, dir string, buckets ...string) *Parts {
	t.Helper()
	_, gcs := objectstest.Fake(t, dir, buckets...)
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := &Parts{GCS: gcs, Store: store}
	if p.Ledger, err = ledger.New(store, ledger.Options{Lease: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if p.Warehouse, err = duckdb.Open("", duckdb.Options{TempDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Warehouse.Close() })
	if p.Feeds, err = contract.Default(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Put writes content to bucket/name and returns the stored object's
// attributes.
func Put(t testing.TB, gcs *objects.GCS, bucket, name, content string, meta map[string]string) objects.Attrs {
	t.Helper()
	w := gcs.Create(context.Background(), bucket, name, "text/csv", meta)
	if _, err := io.WriteString(w, content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Attrs()
}

func Query(t testing.TB, q warehouse.Querier, sql string) [][]string {
	t.Helper()
	res, err := q.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return res.Rows
}
