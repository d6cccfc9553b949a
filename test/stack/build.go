package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// Build compiles cmd/server as the Dockerfile does (CGO_ENABLED=0) into dir
// and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := tfconfig.RepoDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/server")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cmd/server (CGO_ENABLED=0): %w\n%s", err, out)
	}
	return bin, nil
}
