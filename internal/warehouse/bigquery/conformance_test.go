package bigquery

import (
	"context"
	"sync"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// TestConformance runs the warehouse port's suite against the adapter over
// bqfake in front of GoogleSQL (the BigQuery emulator, bqfake.Options.SQL),
// a fresh fake per test: bqfake does BigQuery's API semantics (exactly-once
// job IDs, insertId, partition decorators, dry runs) and the emulator runs
// every query, so every answer is compared. The one emulator defect left
// is the windowed NUMERIC sum of the DISCARDING view.
func TestConformance(t *testing.T) {
	warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
		return newSQLTestEnv(t, warehouse.Accumulating).w
	}, warehousetest.Features{})
}

// TestReadsDiscarding runs the named reads over a dataset whose views are
// in DISCARDING mode.
func TestReadsDiscarding(t *testing.T) {
	warehousetest.RunModeWith(t, func(t *testing.T) warehousetest.Warehouse {
		return newSQLTestEnv(t, warehouse.Discarding).w
	}, warehousetest.Features{Accumulation: warehouse.Discarding, Defects: warehousetest.Defects{WindowNumericSum: defectWindowSum}})
}

// TestConformanceSharedDataset runs the suite twice through one fake, as
// the live run (live_test.go) does in its scratch dataset, run after run:
// each test must hold whatever the tests before it wrote, in this run or
// an earlier one.
//
// The fake holds every row, so between tests it moves to a fresh emulator
// once restartAfter statements ran on the current one.
func TestConformanceSharedDataset(t *testing.T) {
	e := newSQLTestEnv(t, warehouse.Accumulating)
	var em *bqemulator.Emulator
	t.Cleanup(func() {
		if em != nil {
			em.Stop()
		}
	})
	fresh := func(t *testing.T) warehousetest.Warehouse {
		if e.fake.Statements() < restartAfter {
			return e.w
		}
		bin := emulator(t).bin
		next, err := bqemulator.Start(context.Background(), bin, bqemulator.Options{Project: testProject})
		if err != nil {
			t.Fatalf("bqfake's GoogleSQL engine: %v", err)
		}
		if err := e.fake.MoveSQL(next.URL); err != nil {
			next.Stop()
			t.Fatal(err)
		}
		if em != nil {
			em.Stop()
		}
		em = next
		return e.w
	}
	for _, run := range []string{"first", "again"} {
		t.Run(run, func(t *testing.T) { warehousetest.RunWith(t, fresh, warehousetest.Features{}) })
	}
}

// newSQLTestEnv is newTestEnv over a fake whose queries run on GoogleSQL,
// with views in mode. It skips or fails as emulator does.
func newSQLTestEnv(t *testing.T, mode string) *testEnv {
	t.Helper()
	url, track := sqlEngine(t, mode)
	e := newLaxTestEnv(t, bqfake.Options{SQL: url, Accumulation: mode})
	e.fake.FailOnViolations(t)
	track(e.fake)
	return e
}

// sqlEngines are the emulators behind the fakes, one per view mode (the
// emulator holds one dataset: defectDefaultDataset), shared by the tests
// as the live run's shares its scratch dataset, and restarted between
// tests once the fakes on it sent restartAfter statements.
var sqlEngines struct {
	mu   sync.Mutex
	mode map[string]*sqlEngineRun
}

type sqlEngineRun struct {
	em    *bqemulator.Emulator
	fakes []*bqfake.Fake
}

func sqlEngine(t *testing.T, mode string) (url string, track func(*bqfake.Fake)) {
	t.Helper()
	bin := emulator(t).bin
	s := &sqlEngines
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == nil {
		s.mode = map[string]*sqlEngineRun{}
		closers = append(closers, func() {
			for _, r := range s.mode {
				r.em.Stop()
			}
		})
	}
	r := s.mode[mode]
	if r != nil {
		n := 0
		for _, f := range r.fakes {
			n += f.Statements()
		}
		if n >= restartAfter {
			r.em.Stop()
			r = nil
		}
	}
	if r == nil {
		em, err := bqemulator.Start(context.Background(), bin, bqemulator.Options{Project: testProject})
		if err != nil {
			t.Fatalf("bqfake's GoogleSQL engine: %v", err)
		}
		r = &sqlEngineRun{em: em}
		s.mode[mode] = r
	}
	return r.em.URL, func(f *bqfake.Fake) {
		s.mu.Lock()
		defer s.mu.Unlock()
		r.fakes = append(r.fakes, f)
	}
}
