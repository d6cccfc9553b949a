package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
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

// objectItem returns the value expression of key in an object constructor.
func objectItem(t *testing.T, expr hcl.Expression, key string) hcl.Expression {
	t.Helper()
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		t.Fatalf("%s: not an object constructor", expr.Range())
	}
	for _, item := range obj.Items {
		k, diags := item.KeyExpr.Value(nil)
		if !diags.HasErrors() && k.Type() == cty.String && k.AsString() == key {
			return item.ValueExpr
		}
	}
	t.Fatalf("%s: no key %s", expr.Range(), key)
	return nil
}

// envExpr returns the expression of one variable in an environment local
// (an object constructor such as local.ingest_env).
func envExpr(t *testing.T, cfg *tfConfig, local, name string) hcl.Expression {
	t.Helper()
	a, ok := cfg.Locals[local]
	if !ok {
		t.Fatalf("local.%s missing", local)
	}
	return objectItem(t, a.Expr, name)
}

// refsOf returns the references an expression makes, rendered.
func refsOf(expr hcl.Expression) map[string]bool {
	out := map[string]bool{}
	for _, v := range expr.Variables() {
		out[renderTraversal(v)] = true
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
