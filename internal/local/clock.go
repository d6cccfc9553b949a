package local

import (
	"sync"
	"time"
)

// Clock is the processing-time clock of a local server. A wall clock follows
// time.Now; a virtual clock stands still until Set moves it, so that a
// scenario of publishes and ticks replays identically (serve --virtual-clock
// and tick --now).
type Clock struct {
	mu      sync.Mutex
	virtual bool
	now     time.Time
}

// WallClock follows the machine's clock.
func WallClock() *Clock { return &Clock{} }

// VirtualClock starts at start and moves only by Set.
func VirtualClock(start time.Time) *Clock { return &Clock{virtual: true, now: start.UTC()} }

// Virtual reports whether the clock only moves by Set.
func (c *Clock) Virtual() bool { return c.virtual }

// Now returns the processing time.
func (c *Clock) Now() time.Time {
	if !c.virtual {
		return time.Now().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves a virtual clock to t. Time never goes backwards: an earlier t
// is ignored, since processing time is monotonic on every real platform.
func (c *Clock) Set(t time.Time) {
	if !c.virtual {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t.UTC()
	}
}
