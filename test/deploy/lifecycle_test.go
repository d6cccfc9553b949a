package deploy

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// State that would be lost with its resource is guarded by prevent_destroy:
// a plan that would delete or re-create it fails instead.
func TestStatefulResourcesPreventDestroy(t *testing.T) {
	cfg := loadTerraform(t)
	for _, addr := range []string{
		"google_pubsub_subscription.push",        // undelivered orders
		"google_pubsub_subscription.dead_letter", // dead-lettered orders
		"google_pubsub_topic.orders",             // seven days of retained orders
		"google_firestore_database.state",        // the ledger and the window state
		"google_bigquery_dataset.analytics",
		"google_bigquery_table.table",
		"google_storage_bucket.bucket", // landing: the ERP's exports
	} {
		t.Run(addr, func(t *testing.T) {
			r := cfg.lookup(t, addr)
			a, ok := attr(r.Block, "lifecycle", "prevent_destroy")
			if !ok {
				t.Fatal("no lifecycle.prevent_destroy")
			}
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() || v.Type() != cty.Bool || !v.True() {
				t.Errorf("prevent_destroy = %s, want the literal true", hclText(cfg, a.Expr))
			}
		})
	}
	// The provider's own guard on the database: a destroy only forgets it.
	db := cfg.lookup(t, "google_firestore_database.state")
	if a, ok := attr(db.Block, "deletion_policy"); !ok || newEvaluator(t, cfg, nil).str(t, a.Expr, nil) != "ABANDON" {
		t.Error(`google_firestore_database.state: deletion_policy must be "ABANDON"`)
	}
}

// The landing bucket is the ERP's and exists before alpipe: Terraform adopts
// it with an import block (creating it would fail with 409), which a scratch
// project turns off.
func TestLandingBucketIsAdopted(t *testing.T) {
	cfg := loadTerraform(t)
	imports := importBlocks(cfg)
	if len(imports) != 1 {
		t.Fatalf("got %d import blocks, want 1 (the landing bucket)", len(imports))
	}
	imp := imports[0]
	if got := traversal(imp.Body.Attributes["to"].Expr); got != "google_storage_bucket.bucket[each.key]" {
		t.Errorf("import to = %s, want google_storage_bucket.bucket[each.key]", got)
	}
	tests := []struct {
		name  string
		adopt bool
		want  []string
	}{
		{name: "AlpinaShop: the bucket exists", adopt: true, want: []string{"landing"}},
		{name: "scratch project: Terraform creates it", adopt: false, want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := deployed(t, cfg, map[string]cty.Value{"adopt_landing_bucket": cty.BoolVal(tc.adopt)})
			fe := ev.eval(t, imp.Body.Attributes["for_each"].Expr, nil)
			got := []string{}
			for _, v := range fe.AsValueSlice() {
				got = append(got, v.AsString())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("imported instances (-want +got):\n%s", diff)
			}
			for _, key := range got {
				each := [2]cty.Value{cty.StringVal(key), cty.StringVal(key)}
				id := ev.str(t, imp.Body.Attributes["id"].Expr, &each)
				buckets := ev.ctx.Variables["local"].GetAttr("buckets")
				name := buckets.GetAttr(key).GetAttr("name").AsString()
				// The provider's import ID of a bucket: {{project_id}}/{{bucket}}.
				if want := ev.vars["project_id"].AsString() + "/" + name; id != want {
					t.Errorf("import id = %q, want %q", id, want)
				}
				if name != ev.vars["landing_bucket"].AsString() {
					t.Errorf("bucket %s is named %q, not var.landing_bucket", key, name)
				}
			}
		})
	}
	if d := cfg.Variables["adopt_landing_bucket"]; d == nil {
		t.Fatal("variable adopt_landing_bucket missing")
	} else if v, _ := d.Body.Attributes["default"].Expr.Value(nil); !v.True() {
		t.Error("adopt_landing_bucket must default to true: AlpinaShop's landing bucket exists")
	}

	// Import blocks need 1.5, a variable in their ID 1.6, for_each 1.7.
	req := requiredVersion(t, cfg)
	m := regexp.MustCompile(`^>=\s*1\.(\d+)\.\d+$`).FindStringSubmatch(req)
	if m == nil {
		t.Fatalf("required_version %q: want a lower bound >= 1.x.y", req)
	}
	if minor, _ := strconv.Atoi(m[1]); minor < 7 {
		t.Errorf("required_version %q allows Terraform before 1.7, which has no for_each in import blocks", req)
	}
}

// importBlocks returns every top-level import block of the module.
func importBlocks(cfg *tfConfig) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, name := range keysOf(cfg.Files) {
		for _, b := range cfg.Files[name].Body.(*hclsyntax.Body).Blocks {
			if b.Type == "import" {
				out = append(out, b)
			}
		}
	}
	return out
}

func requiredVersion(t *testing.T, cfg *tfConfig) string {
	t.Helper()
	for _, f := range cfg.Files {
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type != "terraform" {
				continue
			}
			if a, ok := b.Body.Attributes["required_version"]; ok {
				v, diags := a.Expr.Value(nil)
				if diags.HasErrors() {
					t.Fatalf("required_version: %s", diags.Error())
				}
				return v.AsString()
			}
		}
	}
	t.Fatal("no required_version")
	return ""
}

// hclText is the source text of an expression, for messages.
func hclText(cfg *tfConfig, expr hcl.Expression) string {
	rng := expr.Range()
	f, ok := cfg.Files[filenameOf(rng.Filename)]
	if !ok {
		return rng.String()
	}
	return string(rng.SliceBytes(f.Bytes))
}

func filenameOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
