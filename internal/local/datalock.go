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

	"github.com/alpinashop/alpipe/internal/ledger"
)

// lockName is the file in the data folder that a running serve holds
// locked, with its PID written in it.
const lockName = "serve.lock"

// DataDirInUseError refuses a server whose data folder another one holds.
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

// lockDataDir makes the running server the only one using dir: the
// embedded engines are single-process, and a second server failed deep in
// DuckDB with a lock error naming a build-cache path. The lock is the
// kernel's (flock), so it dies with its process: a crashed server leaves
// the file behind but never the lock. The returned file holds the lock
// until closed.
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
	if err := writePID(f); err != nil {
		return nil, errors.Join(fmt.Errorf("data folder lock %s: %w", path, err), f.Close())
	}
	return f, nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// releaseDeadLeases ends the ledger leases and locks a serve killed (kill -9)
// or crashed left in the folder, so that a backfill takes its files over at
// once instead of waiting out LEDGER_LEASE (10 min). The folder's lock is
// the proof: no other process can open the store while this one holds it,
// so whoever took a lease in it has died. It must run after lockDataDir and
// before this server takes a lease itself. Production never does this: a
// lease's holder there may be alive on another instance.
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
