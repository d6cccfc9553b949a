//go:build !unix

package local

import "os"

// Without flock the data folder is not guarded here; the embedded
// engines' own locks still refuse a second server, less clearly.
func tryLock(*os.File) (bool, error) { return true, nil }
