package deploy

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// prevent_destroy cannot depend on a variable, and terraform destroy must
// work on a dev environment: no resource of the module sets it, except one
// guard per object holding production's data (terraform_data, in prod
// only), whose triggers_replace is the object's ID. A plan that would
// delete or re-create such an object would also destroy its guard, and
// fails. The provider's own deletion protections follow the environment
// too (asserted by terraform test).
func TestOnlyProductionDataPreventsDestroy(t *testing.T) {
	cfg := loadTerraform(t)
	for _, r := range cfg.Resources {
		if _, ok := attr(r.Block, "lifecycle", "prevent_destroy"); ok && r.addr() != "terraform_data.production_data" {
			t.Errorf("%s sets prevent_destroy: a dev environment could not be destroyed", r.addr())
		}
	}
	guard := cfg.lookup(t, "terraform_data.production_data")
	a, ok := attr(guard.Block, "lifecycle", "prevent_destroy")
	if !ok {
		t.Fatal("terraform_data.production_data: no lifecycle.prevent_destroy")
	}
	if v, diags := a.Expr.Value(nil); diags.HasErrors() || v.Type() != cty.Bool || !v.True() {
		t.Errorf("prevent_destroy = %s, want the literal true", hclText(cfg, a.Expr))
	}
	if a, ok := attr(guard.Block, "triggers_replace"); !ok || traversal(a.Expr) != "each.value" {
		t.Error("terraform_data.production_data: triggers_replace must be each.value, the guarded object's ID")
	}

	tables := keysOf(newEvaluator(t, cfg, map[string]cty.Value{"project_id": cty.StringVal("p-1234"), "environment": cty.StringVal("dev")}).
		forEach(t, cfg.lookup(t, "google_bigquery_table.table")))
	prod := []string{
		"bucket/landing",    // the ERP's exports, the only copy of the raw sources
		"bucket/quarantine", // rows people are fixing
		"database/state",    // the ledger and the window state
		"dataset/analytics",
		"subscription/AggregateOrders", // undelivered orders
		"subscription/dead_letter",     // dead-lettered orders
		"topic/orders",                 // seven days of retained orders
	}
	for _, table := range tables {
		prod = append(prod, "table/"+table)
	}
	sort.Strings(prod)
	tests := []struct {
		name string
		vars map[string]cty.Value
		want []string
	}{
		{name: "prod", vars: map[string]cty.Value{"environment": cty.StringVal("prod"), "landing_bucket": cty.StringVal("erp-exports"), "adopt_landing_bucket": cty.True}, want: prod},
		{name: "dev", vars: map[string]cty.Value{"environment": cty.StringVal("dev")}, want: []string{}},
		{name: "dev with an adopted landing bucket, which is not the module's to delete", vars: map[string]cty.Value{"environment": cty.StringVal("dev"), "landing_bucket": cty.StringVal("erp-exports"), "adopt_landing_bucket": cty.True}, want: []string{"bucket/landing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["project_id"] = cty.StringVal("p-1234")
			got := keysOf(newEvaluator(t, cfg, tc.vars).forEach(t, guard))
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("guarded objects (-want +got):\n%s", diff)
			}
		})
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
			ev := deployed(t, cfg, map[string]cty.Value{"adopt_landing_bucket": cty.BoolVal(tc.adopt), "landing_bucket": cty.StringVal("erp-exports")})
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
	} else if v, _ := d.Body.Attributes["default"].Expr.Value(nil); v.True() {
		t.Error("adopt_landing_bucket must default to false: only production's variables (env/prod.tfvars) adopt the ERP's bucket")
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

// Bucket names are global: no default may name one of production's, or a
// scratch deployment with the defaults would collide with (or adopt)
// AlpinaShop's buckets. Unset, each bucket is named after the project, or
// name_prefix; production names its buckets in env/prod.tfvars.
func TestBucketNamesComeFromTheProject(t *testing.T) {
	cfg := loadTerraform(t)
	named := func(prefix string) map[string]string {
		out := map[string]string{}
		for _, role := range []string{"build", "landing", "quarantine", "staging"} {
			out[role] = prefix + "-" + role
		}
		return out
	}
	tests := []struct {
		name string
		vars map[string]cty.Value
		want map[string]string
	}{
		{name: "one project", vars: map[string]cty.Value{"project_id": cty.StringVal("alpipe-dev-a")}, want: named("alpipe-dev-a")},
		{name: "another project", vars: map[string]cty.Value{"project_id": cty.StringVal("alpipe-dev-b")}, want: named("alpipe-dev-b")},
		{name: "a prefix", vars: map[string]cty.Value{"project_id": cty.StringVal("alpipe-dev-a"), "name_prefix": cty.StringVal("acme-alpipe")}, want: named("acme-alpipe")},
		{name: "one bucket named", vars: map[string]cty.Value{"project_id": cty.StringVal("alpipe-dev-a"), "quarantine_bucket": cty.StringVal("q-of-my-own")},
			want: map[string]string{"build": "alpipe-dev-a-build", "landing": "alpipe-dev-a-landing", "quarantine": "q-of-my-own", "staging": "alpipe-dev-a-staging"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["environment"] = cty.StringVal("dev")
			ev := newEvaluator(t, cfg, tc.vars)
			got := map[string]string{}
			for role, b := range ev.ctx.Variables["local"].GetAttr("buckets").AsValueMap() {
				got[role] = b.GetAttr("name").AsString()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bucket names (-want +got):\n%s", diff)
			}
		})
	}

	prod := tfvars(t, filepath.Join(cfg.Dir, "env", "prod.tfvars"))
	for name, b := range cfg.Variables {
		a, ok := b.Body.Attributes["default"]
		if !ok {
			continue
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
			continue
		}
		for pv, pval := range prod {
			if strings.HasSuffix(pv, "_bucket") && pval.Type() == cty.String && pval.AsString() == v.AsString() {
				t.Errorf("variable %s defaults to %q, production's %s", name, v.AsString(), pv)
			}
		}
	}
}
