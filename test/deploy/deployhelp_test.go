package deploy

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeployScriptHelp: `scripts/deploy.sh --help` prints its header (the
// steps, the usage line and the environment) and exits 0 without needing
// gcloud, terraform or bq. Without a target it prints the same and exits 2
// (TestDeployScriptNeedsATarget).
func TestDeployScriptHelp(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	script := filepath.Join(repoRoot(t), "scripts", "deploy.sh")
	for _, flag := range []string{"--help", "-h", "help"} {
		out, err := exec.Command("bash", script, flag).CombinedOutput()
		if err != nil {
			t.Fatalf("deploy.sh %s: %v\n%s", flag, err, out)
		}
		for _, want := range []string{"bootstrap  enable", "smoke      dev only", "Usage: scripts/deploy.sh --project ID --env dev|prod", "PROJECT_ID", "exits 2"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("deploy.sh %s does not print %q:\n%s", flag, want, out)
			}
		}
		if strings.Contains(string(out), "set -euo") || strings.HasPrefix(string(out), "#") {
			t.Errorf("deploy.sh %s prints code or comment marks:\n%s", flag, out)
		}
	}
}
