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

// prevent_destroy cannot depend on a variable, and terraform destroy must
// work on a dev environment: no resource of the module sets it, except one
// guard per object holding production's data (terraform_data, in prod
// only), whose triggers_replace is the object's ID. A plan that would
// delete or re-create such an object would also destroy its guard, and
// fails. Which objects are guarded in which environment is asserted by
// terraform test (tests/prod, tests/buckets.tftest.hcl), as are the
// provider's own deletion protections.
func TestOnlyProductionDataPreventsDestroy(t *testing.T) {
	m := parseModule(t)
	for addr, r := range m.resources() {
		if _, ok := attr(r, "lifecycle", "prevent_destroy"); ok && addr != "terraform_data.production_data" {
			t.Errorf("%s sets prevent_destroy: a dev environment could not be destroyed", addr)
		}
	}
	guard, ok := m.resources()["terraform_data.production_data"]
	if !ok {
		t.Fatal("no terraform_data.production_data")
	}
	if a, ok := attr(guard, "lifecycle", "prevent_destroy"); !ok || !constant(a.Expr).RawEquals(cty.True) {
		t.Error("terraform_data.production_data: lifecycle.prevent_destroy must be the literal true")
	}
	if a, ok := attr(guard, "triggers_replace"); !ok || m.text(a.Expr) != "each.value" {
		t.Error("terraform_data.production_data: triggers_replace must be each.value, the guarded object's ID")
	}
}

// The landing bucket is the ERP's and exists before alpipe: Terraform adopts
// it with an import block (creating it would fail with 409), which a scratch
// project turns off. That production imports it and dev does not is
// asserted by terraform test (tests/prod; tests/dev and the dev apply of
// deployment.tftest.hcl, which a mock provider's import would fail;
// tests/buckets.tftest.hcl for a dev environment that adopts one).
func TestLandingBucketIsAdopted(t *testing.T) {
	m := parseModule(t)
	imports := m.blocksOf("import")
	if len(imports) != 1 {
		t.Fatalf("got %d import blocks, want 1 (the landing bucket)", len(imports))
	}
	got := map[string]string{}
	for _, name := range []string{"for_each", "to", "id"} {
		got[name] = m.text(imports[0].Body.Attributes[name].Expr)
	}
	want := map[string]string{
		"for_each": `var.adopt_landing_bucket ? toset(["landing"]) : toset([])`,
		"to":       "google_storage_bucket.bucket[each.key]",
		// The provider's import ID of a bucket: {{project_id}}/{{bucket}}.
		"id": `"${var.project_id}/${local.buckets[each.key].name}"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("import block (-want +got):\n%s", diff)
	}
	if d := m.blocksOf("variable", "adopt_landing_bucket"); len(d) != 1 || !constant(d[0].Body.Attributes["default"].Expr).RawEquals(cty.False) {
		t.Error("adopt_landing_bucket must default to false: only production's variables (env/prod.tfvars) adopt the ERP's bucket")
	}

	// Import blocks need 1.5, a variable in their ID 1.6, for_each 1.7.
	var req string
	for _, b := range m.blocksOf("terraform") {
		if a, ok := b.Body.Attributes["required_version"]; ok {
			req = constant(a.Expr).AsString()
		}
	}
	m1 := regexp.MustCompile(`^>=\s*1\.(\d+)\.\d+$`).FindStringSubmatch(req)
	if m1 == nil {
		t.Fatalf("required_version %q: want a lower bound >= 1.x.y", req)
	}
	if minor, _ := strconv.Atoi(m1[1]); minor < 7 {
		t.Errorf("required_version %q allows Terraform before 1.7, which has no for_each in import blocks", req)
	}
}

// Bucket names are global: no default may name one of production's, or a
// scratch deployment with the defaults would collide with (or adopt)
// AlpinaShop's buckets. How names derive from the project, name_prefix or
// a named bucket is asserted by tests/buckets.tftest.hcl.
func TestNoDefaultNamesProductionsBuckets(t *testing.T) {
	m := parseModule(t)
	vars, diags := hclsyntax.ParseConfig([]byte(readRepoFile(t, "terraform/env/prod.tfvars")), "prod.tfvars", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	prod := map[string]string{}
	for name, a := range vars.Body.(*hclsyntax.Body).Attributes {
		if v := constant(a.Expr); strings.HasSuffix(name, "_bucket") && v.Type().Equals(cty.String) {
			prod[name] = v.AsString()
		}
	}
	if len(prod) == 0 {
		t.Fatal("env/prod.tfvars names no bucket")
	}
	for _, b := range m.blocksOf("variable") {
		a, ok := b.Body.Attributes["default"]
		if !ok {
			continue
		}
		if v := constant(a.Expr); v.Type().Equals(cty.String) && !v.IsNull() {
			for pv, name := range prod {
				if name == v.AsString() {
					t.Errorf("variable %s defaults to %q, production's %s", b.Labels[0], name, pv)
				}
			}
		}
	}
}
