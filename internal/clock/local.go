package clock

import (
	"sync"
	"time"
)

// Local is the processing-time clock of a local server (alpipe serve, demo,
// the tests that start one). A wall clock follows time.Now; a virtual clock
// stands still until Set moves it, so that a scenario of publishes and
// ticks replays identically (serve --virtual-clock and tick --now).
type Local struct {
	mu      sync.Mutex
	virtual bool
	now     time.Time
}

// Wall follows the machine's clock.
func Wall() *Local { return &Local{} }

// Virtual starts at start and moves only by Set.
func Virtual(start time.Time) *Local { return &Local{virtual: true, now: start.UTC()} }

// Virtual reports whether the clock only moves by Set.
func (c *Local) Virtual() bool { return c.virtual }

// Now returns the processing time.
func (c *Local) Now() time.Time {
	if !c.virtual {
		return time.Now().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves a virtual clock to t. Time never goes backwards: an earlier t
// is ignored, since processing time is monotonic on every real platform.
func (c *Local) Set(t time.Time) {
	if !c.virtual {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t.UTC()
	}
}
