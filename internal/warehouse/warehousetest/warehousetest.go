// Package warehousetest is the conformance suite of the warehouse port
// (warehouse.Warehouse, whose doc comment is the contract): every adapter
// runs it from its own tests, so that the local default and production
// behave alike. DuckDB (embedded) runs all of it; the BigQuery adapter runs
// it over bqfake in front of the BigQuery emulator (bqfake plays the API
// semantics the emulator lacks, GoogleSQL runs every query), with the
// emulator's one defect left named (Features.WindowSumDefect), and,
// against a real project,
// all of it (live_test.go).
//
// The suite only uses SQL that DuckDB and BigQuery both accept, with
// unqualified table names (a BigQuery adapter sets a default dataset). Every
// test marks its rows with a fresh tag (in ids, SKUs, object names and the
// aggregation name) and reads only rows carrying it, so the tests also hold
// when an adapter shares one scratch dataset between them.
package warehousetest

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is the port under test, whose contract warehouse.Warehouse
// states, with the SQL method every adapter has beside it, which the suite
// checks and reads its rows with.
type Warehouse interface {
	warehouse.Warehouse
	warehouse.Querier
}

// Features says what a backend can be tested for, like watermill's
// tests.Features: the zero value is a backend that can do everything.
type Features struct {
	// Accumulation is the mode the backend created the dashboard view
	// ventas_hora_pais for; "" means ACCUMULATING.
	Accumulation string
	// WindowSumDefect, when set, is the sentence naming an engine's
	// defect (the GoogleSQL emulator's) that makes SUM of NUMERIC as a
	// window function wrong, as the DISCARDING views compute importe:
	// their importe is then compared outside the window function (a GROUP
	// BY over the panes the view counts, de-duplicated as the view does),
	// every other column as read.
	WindowSumDefect string
}

// featured carries the Features into the helpers that read query results.
type featured struct {
	Warehouse
	f Features
}

// opener wraps newWarehouse's warehouses with f, when f names a defect.
func opener(newWarehouse func(t *testing.T) Warehouse, f Features) func(t *testing.T) Warehouse {
	return func(t *testing.T) Warehouse {
		w := newWarehouse(t)
		if f.WindowSumDefect != "" {
			return featured{Warehouse: w, f: f}
		}
		return w
	}
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
		{"QueryIsReadOnly", testQueryReadOnly},
	}
	open := opener(newWarehouse, f)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
	}
	RunModeWith(t, newWarehouse, f)
}

// RunModeWith runs the part of the suite that depends on the view's
// accumulation mode (f.Accumulation): the view and the named reads. An
// adapter runs it for the mode RunWith did not.
func RunModeWith(t *testing.T, newWarehouse func(t *testing.T) Warehouse, f Features) {
	t.Helper()
	open := opener(newWarehouse, f)
	mode := f.Accumulation
	if mode == "" {
		mode = warehouse.Accumulating
	}
	t.Run("ViewShowsTheCurrentValue", func(t *testing.T) { testView(t, mode, open(t)) })
	t.Run("SessionViewLeavesOutMergedSessions", func(t *testing.T) { testSessionView(t, mode, open(t)) })
	runReads(t, open, mode)
}

// newTag returns a marker unique to one test run, usable in SQL literals.
func newTag(*testing.T) string { return "wt" + strings.ToLower(rand.Text()) }
