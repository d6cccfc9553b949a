package bigquery

import (
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// TestConformance runs the warehouse port's suite against the adapter over
// bqfake, a fresh fake per test. The fake checks every request as BigQuery
// would but executes only one simple SELECT form (columns or SUMs of one
// table, equality and IN filters, ORDER BY columns): the suite compares the
// rows of those queries, so NUMERIC's round trip through the adapter and
// the wire is checked here; the other queries are still sent and must be
// accepted, and the GoogleSQL run (googlesql_test.go) and the live run
// (live_test.go) check their rows.
func TestConformance(t *testing.T) {
	warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
		e := newTestEnv(t)
		return executing{e.w, e.fake}
	}, warehousetest.Features{
		NoQueryResults: "bqfake executes only simple SELECTs (query rows are checked by the GoogleSQL and live runs)",
	})
}

// executing tells the suite which queries bqfake answers from its rows.
type executing struct {
	*Warehouse
	fake *bqfake.Fake
}

func (e executing) Executes(sql string) bool { return e.fake.Executes(sql) }

var _ warehousetest.Executor = executing{}

// TestReadsDiscarding runs the named reads over a fake whose dashboard view
// is modelled in DISCARDING mode.
func TestReadsDiscarding(t *testing.T) {
	warehousetest.RunReads(t, func(t *testing.T) warehousetest.Warehouse {
		e := newTestEnvWith(t, bqfake.Options{Accumulation: warehouse.Discarding})
		return e.w
	}, warehouse.Discarding)
}

// TestConformanceSharedDataset runs the suite twice in one dataset, as the
// live run (live_test.go) does in its scratch dataset, run after run: each
// test must hold whatever the tests before it wrote, in this run or an
// earlier one.
func TestConformanceSharedDataset(t *testing.T) {
	e := newTestEnv(t)
	for _, run := range []string{"first", "again"} {
		t.Run(run, func(t *testing.T) {
			warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
				return executing{e.w, e.fake}
			}, warehousetest.Features{
				NoQueryResults: "bqfake executes only simple SELECTs (query rows are checked by the GoogleSQL and live runs)",
			})
		})
	}
}
