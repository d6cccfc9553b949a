// Package warehousetest is the conformance suite of the warehouse port
// (warehouse.Warehouse, whose doc comment is the contract), run by every
// adapter's tests: DuckDB, BigQuery over bqfake and the emulator (its
// defect named in Features), and real BigQuery (live_test.go).
//
// The suite uses SQL both engines accept, with unqualified table names.
// Every test marks its rows with a fresh tag and reads only those, so the
// tests also hold in one shared scratch dataset.
package warehousetest

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is the port under test with the SQL method the suite reads with.
type Warehouse interface {
	warehouse.Warehouse
	warehouse.Querier
}

// Features says what a backend can be tested for; the zero value can do
// everything.
type Features struct {
	// Accumulation is the mode of the backend's views; "" is ACCUMULATING.
	Accumulation string
	// WindowSumDefect, when set, names an engine's defect making SUM of
	// NUMERIC over a window wrong: the DISCARDING views' importe is then
	// compared summed by a GROUP BY over the panes the view counts.
	WindowSumDefect string
}

type featured struct {
	Warehouse
	f Features
}

func opener(newWarehouse func(t *testing.T) Warehouse, f Features) func(t *testing.T) Warehouse {
	return func(t *testing.T) Warehouse { return featured{Warehouse: newWarehouse(t), f: f} }
}

// RunWith runs the whole suite with the given features, newWarehouse once
// per test.
func RunWith(t *testing.T, newWarehouse func(t *testing.T) Warehouse, f Features) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, w Warehouse, tag string)
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
		{"QueryIsReadOnly", testQueryReadOnly},
	}
	open := opener(newWarehouse, f)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t), newTag(t)) })
	}
	RunModeWith(t, newWarehouse, f)
}

// RunModeWith runs the part of the suite that depends on f.Accumulation:
// the views and the named reads.
func RunModeWith(t *testing.T, newWarehouse func(t *testing.T) Warehouse, f Features) {
	t.Helper()
	open := opener(newWarehouse, f)
	mode := f.Accumulation
	if mode == "" {
		mode = warehouse.Accumulating
	}
	t.Run("ViewShowsTheCurrentValue", func(t *testing.T) { testView(t, mode, open(t), newTag(t)) })
	t.Run("SessionViewLeavesOutMergedSessions", func(t *testing.T) {
		testSessionView(t, mode, open(t), newTag(t))
	})
	runReads(t, open, mode)
}

// newTag returns a marker unique to one test, usable in SQL literals: the
// runner hands every test its own.
func newTag(*testing.T) string { return "wt" + strings.ToLower(rand.Text()) }
