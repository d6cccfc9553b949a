//go:build unix

package local

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f unless another open file holds one.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
