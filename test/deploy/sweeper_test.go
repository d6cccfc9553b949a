package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sweeper's alert reads its "sweep finished" line; the line must exist.
func TestSweepLogLineExists(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	filter := ev.ctx.Variables["local"].GetAttr("sweep_filter").AsString()
	if !strings.Contains(filter, `jsonPayload.message="sweep finished"`) {
		t.Fatalf("sweep_filter %s does not select the \"sweep finished\" line", filter)
	}
	found := false
	root := filepath.Join(repoRoot(t), "internal", "sweep")
	paths, _ := filepath.Glob(filepath.Join(root, "*.go"))
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if strings.Contains(src, `"sweep finished"`) {
			found = true
			for _, field := range []string{`"found"`, `"ingested"`, `"failed"`, `"skipped"`} {
				if !strings.Contains(src, field) {
					t.Errorf("%s logs \"sweep finished\" without the field %s the metrics extract", p, field)
				}
			}
		}
	}
	if !found {
		t.Errorf("no \"sweep finished\" log line in internal/sweep: the sweeper metrics and alert would see nothing")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
