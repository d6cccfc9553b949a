package clock

import (
	"fmt"
	"sync"
	"time"
)

// Local is the processing-time clock of a local server (alpipe serve, demo,
// the tests that start one). A wall clock follows time.Now; a virtual clock
// stands still until Set moves it, so that a scenario of publishes and
// ticks replays identically (serve --virtual-clock and tick --now).
type Local struct {
	mu      sync.Mutex // guards now
	virtual bool
	now     time.Time
	// setMu orders Sets, so that save sees the times in the order they
	// take effect; Now does not wait for a save.
	setMu sync.Mutex
	save  func(time.Time) error
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

// Persist has every later Set save the new time before the clock shows
// it: whoever restores the clock from what save kept (a restarted server)
// never starts it earlier than a time it showed.
func (c *Local) Persist(save func(time.Time) error) {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	c.save = save
}

// Set moves a virtual clock to t. Time never goes backwards: an earlier t
// is ignored, since processing time is monotonic on every real platform.
// When the time cannot be saved (Persist) the clock stays where it was and
// Set says why.
func (c *Local) Set(t time.Time) error {
	if !c.virtual {
		return nil
	}
	c.setMu.Lock()
	defer c.setMu.Unlock()
	if !t.After(c.Now()) {
		return nil
	}
	t = t.UTC()
	if c.save != nil {
		if err := c.save(t); err != nil {
			return fmt.Errorf("set the clock to %s: %w", t.Format(time.RFC3339Nano), err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	return nil
}
