package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/ledger"
)

// lockName holds the running serve's PID.
const lockName = "serve.lock"

type DataDirInUseError struct {
	Dir string
	PID int // of the holder; 0 when its lock file did not say
}

func (e *DataDirInUseError) Error() string {
	holder := "another alpipe serve"
	if e.PID > 0 {
		holder += " (PID " + strconv.Itoa(e.PID) + ")"
	}
	return holder + " uses " + e.Dir + ": stop it, or pass --data with another folder"
}

// lockDataDir makes the server the only one using dir: the embedded engines
// are single-process, and a second server failed deep in DuckDB with a lock
// error naming a build-cache path. flock dies with its process: a crashed
// server leaves the file behind but never the lock.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data folder lock: %w", err)
	}
	ok, err := tryLock(f)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data folder lock %s: %w", path, err), f.Close())
	}
	if !ok {
		busy := &DataDirInUseError{Dir: dir}
		if b, rerr := os.ReadFile(path); rerr == nil {
			busy.PID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		_ = f.Close()
		return nil, busy
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("data folder lock %s: %w", path, err), f.Close())
	}
	return f, nil
}

// releaseDeadLeases ends the leases a killed serve left, so that a backfill
// takes its files over at once instead of after LEDGER_LEASE. The folder's
// lock proves their holder dead; it must run after lockDataDir and before
// this server takes a lease. Production never does this: a lease's holder
// there may be alive on another instance.
func releaseDeadLeases(ctx context.Context, led *ledger.Ledger, now time.Time, log *slog.Logger) error {
	n, err := led.ReleaseLeases(ctx, now, "abandoned: the alpipe serve that held it stopped without finishing (killed or crashed); the next delivery or backfill takes it over")
	if err != nil {
		return fmt.Errorf("release the leases of a stopped serve: %w", err)
	}
	if n > 0 {
		log.WarnContext(ctx, "released the ledger leases of a serve that stopped without finishing", "leases", n)
	}
	return nil
}

// clockMarkName is the file in the data folder that says which clock wrote
// it. A virtual-clock server over a folder the wall clock wrote mixes two
// timelines: the ledger's December records read as "-261d ago" on a March
// dashboard, and status counts them as "files of the last 24h". One clock
// per folder keeps every age honest.
const clockMarkName = "clock"

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

func clockKind(c *clock.Local) string {
	if c.Virtual() {
		return "virtual"
	}
	return "wall"
}

// claimClock records the server's clock in dir, or refuses when dir was
// written on the other one. Unmarked data was written by an earlier
// version, on the wall clock unless told otherwise.
//
// A virtual clock's time is kept in the mark, saved by every Set before the
// clock shows it, so a restart never goes back in processing time (windows
// closed at the kept time would take orders again): an earlier --start
// resumes from the kept time, a later one moves the clock on.
func claimClock(dir string, c *clock.Local) error {
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

func keepClock(path string, c *clock.Local, kept time.Time) error {
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

// parseMark: a virtual mark of an earlier version has no time (zero).
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

// writeMark renames: a server killed while writing must not lose the time.
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
