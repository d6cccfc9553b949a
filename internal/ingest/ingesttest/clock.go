package ingesttest

import (
	"sync"
	"time"
)

// Clock is a settable clock for an ingest.Service, safe for the concurrent
// ingests a test runs.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time, the func an ingest.Service is given.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
