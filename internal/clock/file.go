// Package clock holds the processing-time clocks a process can run on: the
// machine's, a virtual one a local server moves (Local), and one shared by
// several processes through a file (File).
package clock

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"
)

// File is a clock read from a file holding one RFC 3339 time, re-read on
// every reading: a test harness moves the time of several processes at once
// by rewriting one file. It never goes backwards: a reading that cannot be
// parsed (the file caught mid-rewrite) or that is earlier than the last one
// returns the last one.
type File struct {
	path string
	mu   sync.Mutex
	last time.Time
}

// NewFile opens the clock, failing when the file does not hold a time now:
// a misconfigured clock must stop the process at start, not at its first
// request.
func NewFile(path string) (*File, error) {
	f := &File{path: path}
	t, err := f.read()
	if err != nil {
		return nil, err
	}
	f.last = t
	return f, nil
}

// Now is the file's time.
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
