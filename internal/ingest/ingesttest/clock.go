package ingesttest

import (
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
)

// Clock is a settable clock for an ingest.Service (a virtual clock.Local),
// safe for the concurrent ingests a test runs.
type Clock struct{ *clock.Local }

func NewClock(start time.Time) *Clock { return &Clock{clock.Virtual(start)} }

// Advance moves the clock d forward: d must be positive (Set ignores a step
// back), and two Advances must not run at once (each reads, then sets).
func (c *Clock) Advance(d time.Duration) {
	_ = c.Set(c.Now().Add(d)) // a clock without Persist cannot fail to move
}
