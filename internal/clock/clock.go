// Package clock holds the processing-time clocks a process can run on: the
// machine's or a virtual one (Local), and one shared through a file (File).
package clock

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"
)

// File is a clock read from a file holding one RFC 3339 time, re-read on
// every reading, so that a harness moves several processes' time at once. It
// never goes backwards: an unreadable (mid-rewrite) or earlier time reads as
// the last one.
type File struct {
	path string
	mu   sync.Mutex
	last time.Time
}

// NewFile opens the clock, failing when the file does not hold a time now:
// a misconfigured clock must stop the process at start.
func NewFile(path string) (*File, error) {
	f := &File{path: path}
	t, err := f.read()
	if err != nil {
		return nil, err
	}
	f.last = t
	return f, nil
}

func (f *File) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, err := f.read(); err == nil && t.After(f.last) {
		f.last = t
	}
	return f.last
}

func (f *File) read() (time.Time, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock file: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, string(bytes.TrimSpace(b)))
	if err != nil {
		return time.Time{}, fmt.Errorf("clock file %s: %w", f.path, err)
	}
	return t.UTC(), nil
}

// Set writes t to path atomically (a rename), for harnesses.
func Set(path string, t time.Time) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(t.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("set clock: %w", err)
	}
	return nil
}

// Local is the processing-time clock of a local server. A virtual clock
// stands still until Set moves it, so that a scenario replays identically
// (serve --virtual-clock and tick --now).
type Local struct {
	mu      sync.Mutex // guards now
	virtual bool
	now     time.Time
	// setMu orders Sets for save; Now does not wait for a save.
	setMu sync.Mutex
	save  func(time.Time) error
}

// Wall follows the machine's clock.
func Wall() *Local { return &Local{} }

// Virtual starts at start and moves only by Set.
func Virtual(start time.Time) *Local { return &Local{virtual: true, now: start.UTC()} }

// Virtual reports whether the clock only moves by Set.
func (c *Local) Virtual() bool { return c.virtual }

func (c *Local) Now() time.Time {
	if !c.virtual {
		return time.Now().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Persist has every later Set save the new time before the clock shows
// it, so that a restarted server never starts earlier than a time it showed.
func (c *Local) Persist(save func(time.Time) error) {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	c.save = save
}

// Set moves a virtual clock forward to t (an earlier t is ignored). When
// the time cannot be saved (Persist) the clock stays where it was.
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
