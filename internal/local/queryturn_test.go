package local

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// overlapping counts how many of its queries run at once.
type overlapping struct {
	now, peak atomic.Int32
}

func (o *overlapping) QueryRows(ctx context.Context, _ string, sink warehouse.RowSink) error {
	n := o.now.Add(1)
	defer o.now.Add(-1)
	for p := o.peak.Load(); n > p && !o.peak.CompareAndSwap(p, n); p = o.peak.Load() {
	}
	time.Sleep(30 * time.Millisecond) // DuckDB building a large value
	if err := sink.Columns([]string{"n"}); err != nil {
		return err
	}
	return sink.Row([]string{"1"})
}

func (o *overlapping) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	var col warehouse.Collect
	err := o.QueryRows(ctx, sql, &col)
	return col.Result, err
}

// TestQueriesRunOneAtATime: a query's peak memory is outside the caps'
// reach (DuckDB builds a row before the row cap can refuse it), so the
// bound holds only if such queries never add up; a query waiting its turn
// past its timeout says why.
func TestQueriesRunOneAtATime(t *testing.T) {
	wh := &overlapping{}
	srv := queryServer(t, wh, config.Query{MaxRows: 10, MaxBytes: 1024, Timeout: time.Minute})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			var got warehouse.Collect
			_, err := srv.QueryRows(t.Context(), "SELECT 1", 0, &got)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("query: %v", err)
		}
	}
	if p := wh.peak.Load(); p != 1 {
		t.Errorf("%d queries ran at once, want 1", p)
	}
}
