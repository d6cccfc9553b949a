package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
func claimClock(dir string, c *Clock) error {
	want := clockKind(c)
	path := filepath.Join(dir, clockMarkName)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if got := strings.TrimSpace(string(b)); got != want {
			return &ClockMismatchError{Dir: dir, Folder: got, Now: want}
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
	if err := os.WriteFile(path, []byte(want+"\n"), 0o644); err != nil {
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
		if e.Name() != lockName && e.Name() != clockMarkName {
			return true, nil
		}
	}
	return false, nil
}
