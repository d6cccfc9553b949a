//go:build unix

package duckdb

import (
	"errors"
	"os"
	"syscall"
)

// lockExclusiveNow takes an exclusive flock on f if nobody holds one; a
// lock dies with its process, so a crashed warehouse never keeps it.
func lockExclusiveNow(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func lockShared(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
}
