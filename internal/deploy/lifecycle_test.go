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

// An infrastructure apply passes no image. Which resources exist must not
// depend on it, or such an apply plans to destroy the services, the Eventarc
// trigger, the push subscription with its backlog and the scheduler jobs.
func TestResourcesDoNotDependOnTheImage(t *testing.T) {
	cfg := loadTerraform(t)
	withImage := deployed(t, cfg, nil)
	project := map[string]cty.Value{"project_id": withImage.vars["project_id"]}
	noImage := newEvaluator(t, cfg, project)
	if !noImage.vars["image"].IsNull() {
		t.Fatal("var.image must default to null for this test to mean anything")
	}
	checked := 0
	for _, r := range cfg.Resources {
		if _, ok := r.Block.Body.Attributes["for_each"]; !ok {
			continue
		}
		checked++
		with, without := keysOf(withImage.forEach(t, r)), keysOf(noImage.forEach(t, r))
		if diff := cmp.Diff(with, without); diff != "" {
			t.Errorf("%s instances depend on var.image (-with image +without):\n%s", r.addr(), diff)
		}
	}
	if checked == 0 {
		t.Fatal("no for_each resource found")
	}
	// The ones whose loss the issue names, spelled out.
	want := map[string][]string{
		"google_cloud_run_v2_service.function":           functionTargets,
		"google_pubsub_subscription.push":                {"AggregateOrders"},
		"google_eventarc_trigger.storage":                {"IngestCSV"},
		"google_cloud_scheduler_job.tick":                {"AdvanceWatermark"},
		"google_cloud_scheduler_job.sweep":               {"SweepLanding"},
		"google_cloud_run_v2_service_iam_member.invoker": functionTargets,
	}
	for addr, keys := range want {
		if diff := cmp.Diff(keys, keysOf(noImage.forEach(t, cfg.lookup(t, addr)))); diff != "" {
			t.Errorf("%s without an image (-want +got):\n%s", addr, diff)
		}
	}
}

// The image is Terraform's only at creation: afterwards the pipeline rolls it
// forward and Terraform ignores it. Without var.image the configuration holds
// a stand-in that must never be deployed: creating a service from it fails
// the plan (a postcondition on the planned image).
func TestServiceImageIsSetOnlyAtCreation(t *testing.T) {
	cfg := loadTerraform(t)
	svc := cfg.lookup(t, "google_cloud_run_v2_service.function")
	lc := nested(svc.Block, "lifecycle")
	if lc == nil {
		t.Fatal("the service has no lifecycle block")
	}
	ignored := map[string]bool{}
	if a, ok := lc.Body.Attributes["ignore_changes"]; ok {
		tuple, _ := a.Expr.(*hclsyntax.TupleConsExpr)
		if tuple != nil {
			for _, e := range tuple.Exprs {
				ignored[traversal(e)] = true
			}
		}
	}
	if !ignored["template[0].containers[0].image"] {
		t.Errorf("ignore_changes %v lacks template[0].containers[0].image: an infrastructure apply would roll the image back", keysOf(ignored))
	}

	imageAttr, ok := attr(svc.Block, "template", "containers", "image")
	if !ok {
		t.Fatal("template.containers.image missing")
	}
	var post *hclsyntax.Block
	for _, b := range lc.Body.Blocks {
		if b.Type == "postcondition" {
			post = b
		}
	}
	if post == nil {
		t.Fatal("no postcondition: an apply without var.image would create services from the stand-in image")
	}
	cond := post.Body.Attributes["condition"]
	refs := map[string]bool{}
	for _, v := range cond.Expr.Variables() {
		refs[renderTraversal(v)] = true
	}
	if !refs["self.template[0].containers[0].image"] {
		t.Errorf("postcondition reads %v, want the planned image self.template[0].containers[0].image", keysOf(refs))
	}

	real := deployed(t, cfg, nil).vars["image"].AsString()
	tests := []struct {
		name     string
		image    cty.Value // var.image
		planned  string    // the image the plan holds for the service; "" = the configured one
		wantPass bool
	}{
		{name: "created with an image", image: cty.StringVal(real), wantPass: true},
		{name: "created without an image", image: cty.NullVal(cty.String), wantPass: false},
		{name: "existing service, apply without an image", image: cty.NullVal(cty.String), planned: real, wantPass: true},
		{name: "existing service, apply with an image", image: cty.StringVal(real), planned: "europe-west1-docker.pkg.dev/p/r/server@sha256:" + strings.Repeat("1", 64), wantPass: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEvaluator(t, cfg, map[string]cty.Value{"project_id": cty.StringVal("alpinashop-datos"), "image": tc.image})
			each := [2]cty.Value{cty.StringVal("IngestCSV"), ev.ctx.Variables["local"].GetAttr("functions").GetAttr("IngestCSV")}
			configured := ev.str(t, imageAttr.Expr, &each)
			if !tc.image.IsNull() && configured != tc.image.AsString() {
				t.Errorf("configured image %q, want var.image %q", configured, tc.image.AsString())
			}
			planned := tc.planned
			if planned == "" {
				planned = configured
			}
			ctx := ev.ctx.NewChild()
			ctx.Variables = map[string]cty.Value{
				"self": cty.ObjectVal(map[string]cty.Value{"template": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{
					"containers": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"image": cty.StringVal(planned)})}),
				})})}),
				"each": cty.ObjectVal(map[string]cty.Value{"key": each[0], "value": each[1]}),
			}
			v, diags := cond.Expr.Value(ctx)
			if diags.HasErrors() {
				t.Fatalf("postcondition: %s", diags.Error())
			}
			if got := v.True(); got != tc.wantPass {
				t.Errorf("postcondition passes = %v, want %v (planned image %q)", got, tc.wantPass, planned)
			}
		})
	}
}

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
