// Package tfconfig reads the deployment Terraform plans (terraform/) without
// a provider or a cloud account: TopologyFile and ServicesFile, which
// Terraform's own test (terraform/tests) holds equal to the plan. The stack
// (test/stack) replays them.
package tfconfig

import (
	"fmt"
	"path/filepath"
	"runtime"
)

// RepoDir is the repository root, found from this source file's location:
// the callers are tests and test harnesses that run from the checkout, in
// whatever working directory `go test` gives them.
func RepoDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the tfconfig source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
}
