package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
