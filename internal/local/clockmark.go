package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// clockMarkName is the file in the data folder that says which clock wrote
// it. A virtual-clock server over a folder the wall clock wrote mixes two
// timelines: the ledger's December records read as "-261d ago" on a March
// dashboard, and status counts them as "files of the last 24h". One clock
// per folder keeps every age honest.
const clockMarkName = "clock"

// ClockMismatchError refuses a server whose clock differs from the one that
// wrote its data folder.
type ClockMismatchError struct {
	Dir         string
	Folder, Now string // "wall" or "virtual"
}

func (e *ClockMismatchError) Error() string {
	other := strings.TrimSuffix(e.Dir, string(filepath.Separator)) + "-wall"
	if e.Now == "virtual" {
		other = strings.TrimSuffix(e.Dir, string(filepath.Separator)) + "-orders" // the README's folder for the orders story
	}
	return fmt.Sprintf("data folder %s was written on the %s clock and this server runs on the %s clock: ages and \"last 24h\" would mix the two timelines; pass --data with another folder (e.g. %s), or remove %s to start afresh",
		e.Dir, e.Folder, e.Now, other, e.Dir)
}

func clockKind(c *Clock) string {
	if c.Virtual() {
		return "virtual"
	}
	return "wall"
}

// claimClock records the server's clock in dir, or refuses when dir was
// written on the other one. A folder without a mark that already holds data
// was written by an earlier version, which ran on the wall clock unless
// told otherwise: it is taken as wall-clock data.
//
// A virtual clock's time is kept in the mark too, saved by every Set before
// the clock shows it. A restart never goes back in processing time: a
// --start earlier than the kept time resumes from the kept time (windows
// closed, watermarks and leases stay where the last run left them), and a
// later --start moves the clock on. Resuming rather than refusing lets the
// same serve command line restart a folder that tick --now moved; the
// serve banner shows the time it resumed at.
func claimClock(dir string, c *Clock) error {
	want := clockKind(c)
	path := filepath.Join(dir, clockMarkName)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		got, kept, err := parseMark(b)
		if err != nil {
			return fmt.Errorf("data folder clock mark %s: %w", path, err)
		}
		if got != want {
			return &ClockMismatchError{Dir: dir, Folder: got, Now: want}
		}
		if want == "virtual" {
			return keepClock(path, c, kept)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("data folder clock mark: %w", err)
	}
	if written, err := holdsData(dir); err != nil {
		return err
	} else if written && want != "wall" {
		return &ClockMismatchError{Dir: dir, Folder: "wall", Now: want}
	}
	if want == "virtual" {
		return keepClock(path, c, time.Time{})
	}
	if err := os.WriteFile(path, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("data folder clock mark: %w", err)
	}
	return nil
}

// keepClock resumes c from the kept time when that is later, saves its time
// and has every later Set save first.
func keepClock(path string, c *Clock, kept time.Time) error {
	if err := c.Set(kept); err != nil {
		return err
	}
	save := func(t time.Time) error { return writeMark(path, t) }
	if err := save(c.Now()); err != nil {
		return err
	}
	c.Persist(save)
	return nil
}

// parseMark reads "wall", or "virtual" and the clock's time on the next line
// (a mark of an earlier version has none: zero).
func parseMark(b []byte) (kind string, kept time.Time, err error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "", time.Time{}, errors.New("empty")
	}
	if len(f) > 1 {
		if kept, err = time.Parse(time.RFC3339Nano, f[1]); err != nil {
			return "", time.Time{}, err
		}
	}
	return f[0], kept, nil
}

// writeMark replaces the mark of a virtual clock at t atomically (a rename):
// a server killed while writing it must not lose the time.
func writeMark(path string, t time.Time) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte("virtual\n"+t.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return fmt.Errorf("data folder clock mark: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("data folder clock mark: %w", err)
	}
	return nil
}

// holdsData reports whether dir holds anything a server wrote besides its
// lock: an unmarked folder with data predates the clock mark.
func holdsData(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("data folder: %w", err)
	}
	for _, e := range entries {
		switch e.Name() {
		case lockName, clockMarkName, clockMarkName + ".tmp":
		default:
			return true, nil
		}
	}
	return false, nil
}
