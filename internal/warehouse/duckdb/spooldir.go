package duckdb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// spoolPattern names Load's spool files in the temp folder.
const spoolPattern = "alpipe-load-*.csv"

// spoolLockName is the file whose lock says which warehouses use a temp
// folder: each open one holds a shared lock for its lifetime.
const spoolLockName = "alpipe-spool.lock"

// claimSpoolDir marks dir as used by this warehouse until the returned file
// is closed, and removes the spool files a crashed process left there
// (12-24 MB each) when no other open warehouse uses dir: those files may
// be another process's Load in flight, when dir is a shared folder such as
// the system's temporary directory.
func claimSpoolDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, spoolLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("spool folder lock: %w", err)
	}
	alone, err := lockExclusiveNow(f)
	if err == nil && alone {
		err = removeStaleSpools(dir)
	}
	if err == nil {
		err = lockShared(f) // turns an exclusive lock into a shared one
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("spool folder %s: %w", dir, err), f.Close())
	}
	return f, nil
}

func removeStaleSpools(dir string) error {
	stale, err := filepath.Glob(filepath.Join(dir, spoolPattern))
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stale spool file: %w", err))
		}
	}
	return errors.Join(errs...)
}
