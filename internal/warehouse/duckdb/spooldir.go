package duckdb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const (
	spoolPattern  = "alpipe-load-*.csv"
	spoolLockName = "alpipe-spool.lock" // each open warehouse holds it shared
)

// claimSpoolDir marks dir as used until the returned file is closed, and
// removes the spool files a crash left there when no other open warehouse
// uses dir (they may be its Load in flight).
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
