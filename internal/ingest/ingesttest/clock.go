package ingesttest

import (
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
)

// Clock is a settable clock for an ingest.Service (a virtual clock.Local),
// safe for the concurrent ingests a test runs.
type Clock struct{ *clock.Local }

func NewClock(start time.Time) *Clock { return &Clock{clock.Virtual(start)} }

func (c *Clock) Advance(d time.Duration) {
	_ = c.Set(c.Now().Add(d)) // a clock without Persist cannot fail to move
}
