// Package warehousetest is the conformance suite of the warehouse port:
// every adapter (DuckDB embedded, BigQuery) runs it from its own tests, so
// that the local default and production behave alike.
//
// The suite only uses SQL that DuckDB and BigQuery both accept, with
// unqualified table names (a BigQuery adapter sets a default dataset). Every
// test marks its rows with a fresh tag (in ids, SKUs, object names and the
// aggregation name) and reads only rows carrying it, so the tests also hold
// when an adapter shares one scratch dataset between them.
package warehousetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is the port under test: what the ingest and the stream need.
type Warehouse interface {
	Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error)
	RefreshDaily(ctx context.Context, aggregate string, dates []int32) error
	Append(ctx context.Context, table string, rows []warehouse.Row) error
	Query(ctx context.Context, sql string) (warehouse.Result, error)
}

// Features says what a backend can be tested for.
type Features struct {
	// Accumulation is the mode the backend created the dashboard view
	// ventas_hora_pais for; "" means ACCUMULATING.
	Accumulation string
	// NoView skips the view test, for a backend whose view is created
	// elsewhere (BigQuery's comes from Terraform) and absent in the dataset.
	NoView bool
}

// Run runs the whole suite against warehouses whose view is in the default
// (ACCUMULATING) mode. newWarehouse is called once per test.
func Run(t *testing.T, newWarehouse func(t *testing.T) Warehouse) {
	RunWith(t, newWarehouse, Features{})
}

// RunWith runs the whole suite with the given features.
func RunWith(t *testing.T, newWarehouse func(t *testing.T) Warehouse, f Features) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, w Warehouse)
	}{
		{"LoadAppendsRows", testLoadAppendsRows},
		{"LoadIsExactlyOncePerID", testLoadExactlyOnce},
		{"LoadOfNoRowsCommitsTheID", testLoadEmpty},
		{"LoadIsAtomicWhenTheSourceFails", testLoadSourceFails},
		{"LoadIsAtomicWhenARowIsInvalid", testLoadInvalidRow},
		{"ConcurrentLoadsOfOneIDLoadOnce", testLoadConcurrent},
		{"LoadRejectsBadRequests", testLoadBadRequests},
		{"ValuesRoundTrip", testValuesRoundTrip},
		{"NumericIsExact", testNumericExact},
		{"RefreshDailyReplacesExactlyTheGivenDates", testRefreshDates},
		{"RefreshDailyCountsTheNewestGeneration", testRefreshNewestGeneration},
		{"RefreshDailyRejectsUnknownAggregate", testRefreshUnknown},
		{"AppendIgnoresRepeatedIDs", testAppendIgnoresRepeats},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newWarehouse(t))
		})
	}
	if !f.NoView {
		mode := f.Accumulation
		if mode == "" {
			mode = warehouse.Accumulating
		}
		t.Run("ViewShowsTheCurrentValue", func(t *testing.T) {
			RunView(t, mode, newWarehouse(t))
		})
	}
}

// newTag returns a marker unique to one test run, usable in SQL literals.
func newTag(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "wt" + hex.EncodeToString(b[:])
}
