package stream

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFlightSharesOneCallPerKey(t *testing.T) {
	var f flight
	var calls atomic.Int32
	release := make(chan struct{})
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			errs[i] = f.do("windows/a", func() error {
				calls.Add(1)
				<-release
				return boom
			})
		})
	}
	time.Sleep(50 * time.Millisecond) // let the callers pile up on the first
	close(release)
	wg.Wait()
	if n := calls.Load(); n < 1 || n > 2 {
		// One call for the pile; a straggler arriving after it ended runs
		// its own, which is allowed.
		t.Errorf("%d calls for 20 concurrent callers, want 1 (at most 2)", n)
	}
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d got %v, want the shared result", i, err)
		}
	}
	if err := f.do("windows/b", func() error { return nil }); err != nil {
		t.Errorf("another key: %v", err)
	}
}
