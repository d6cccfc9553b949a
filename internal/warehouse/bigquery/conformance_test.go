package bigquery

import (
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// TestConformance runs the warehouse port's suite against the adapter over
// bqfake, a fresh fake per test. The fake checks every request as BigQuery
// would but does not execute SQL, so the suite's checks of query rows are
// skipped (their queries are still sent and must be accepted); the live
// run (live_test.go) checks those against a real project.
func TestConformance(t *testing.T) {
	warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
		return newTestEnv(t).w
	}, warehousetest.Features{
		NoQueryResults: "bqfake does not execute SQL (query rows are checked by the live conformance run)",
	})
}
