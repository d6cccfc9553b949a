// Package bqemulator finds and runs the open-source BigQuery emulator
// (github.com/goccy/bigquery-emulator), for tests that want BigQuery's own
// analyzer to see their SQL. Nothing in production imports it.
package bqemulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The places Find looks, in order; the paths are relative to the
// repository root.
const (
	EnvVar     = "BIGQUERY_EMULATOR"                                 // names a binary explicitly
	SharedPath = "../shared/bigquery-emulator/bin/bigquery-emulator" // the team's prebuilt binary (see its README)
	CacheDir   = ".cache/bin"                                        // where go install puts it (git-ignored)
	// Module is installed at Version, the tag the shared binary was built
	// from (plus two commits), when neither of the above exists.
	Module  = "github.com/goccy/bigquery-emulator/cmd/bigquery-emulator"
	Version = "v0.8.1"
	binName = "bigquery-emulator"
)

// ErrMissing is wrapped by Find when no binary is found; it names the three
// ways to provide the emulator.
var ErrMissing = errors.New("no BigQuery emulator: set " + EnvVar + " to its binary, or provide " + SharedPath +
	" (from the repository root), or let `go install " + Module + "@" + Version + "` put it in " + CacheDir +
	" (the build needs about 6 GB of memory and 7-25 minutes on 2 cores)")

// Find returns the emulator binary under the repository root root:
// $BIGQUERY_EMULATOR (which must then exist), else SharedPath, else one in
// CacheDir, else, when install is set, the one go install builds there.
func Find(ctx context.Context, root string, install bool) (string, error) {
	if p := os.Getenv(EnvVar); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvVar, p, err)
		}
		return p, nil
	}
	for _, p := range []string{filepath.Join(root, SharedPath), filepath.Join(root, CacheDir, binName)} {
		if executable(p) == nil {
			return p, nil
		}
	}
	if !install {
		return "", fmt.Errorf("%w (go install not attempted)", ErrMissing)
	}
	bin := filepath.Join(root, CacheDir)
	cmd := exec.CommandContext(ctx, "go", "install", Module+"@"+Version)
	cmd.Dir = os.TempDir() // outside this module
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w (go install failed: %v: %s)", ErrMissing, err, lastLine(out))
	}
	p := filepath.Join(bin, binName)
	if err := executable(p); err != nil {
		return "", fmt.Errorf("%w (go install left no %s: %v)", ErrMissing, p, err)
	}
	return p, nil
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// RepoRoot is the nearest directory at or above the working directory
// holding a go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
