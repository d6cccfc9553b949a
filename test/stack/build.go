package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// BuildWith compiles cmd/server as the Dockerfile does (CGO_ENABLED=0) into
// dir and returns the binary's path. replace (path in the repository ->
// content) ships other embedded data through go build -overlay.
func BuildWith(ctx context.Context, dir string, replace map[string][]byte) (string, error) {
	root, err := tfconfig.RepoDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "server")
	args := []string{"build", "-o", bin}
	if len(replace) > 0 {
		overlay := map[string]map[string]string{"Replace": {}}
		for rel, content := range replace {
			backing := filepath.Join(dir, "overlay-"+filepath.Base(rel))
			if err := os.WriteFile(backing, content, 0o600); err != nil {
				return "", err
			}
			overlay["Replace"][filepath.Join(root, rel)] = backing
		}
		b, err := json.Marshal(overlay)
		if err != nil {
			return "", err
		}
		file := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			return "", err
		}
		args = append(args, "-overlay", file)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/server")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cmd/server (CGO_ENABLED=0): %w\n%s", err, out)
	}
	return bin, nil
}
