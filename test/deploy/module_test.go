package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// repoRoot is the repository root, independent of the working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := tfconfig.RepoDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// moduleData is terraform/module.json: what the module plans that Go code
// and the scripts must agree with, held equal to the plan by
// terraform/tests/deployment.tftest.hcl.
type moduleData struct {
	APIs                         []string `json:"apis"`
	ArtifactRepository           string   `json:"artifact_repository"`
	Region                       string   `json:"region"`
	DeployerAccountID            string   `json:"deployer_account_id"`
	RejectCodes                  []string `json:"reject_codes"`
	FirestoreCollectionGroups    []string `json:"firestore_collection_groups"`
	FirestoreTTLCollectionGroups []string `json:"firestore_ttl_collection_groups"`
	Tables                       map[string]struct {
		Partition  string            `json:"partition"`
		Clustering []string          `json:"clustering"`
		Schema     []warehouse.Field `json:"schema"`
	} `json:"tables"`
	Views map[string]struct {
		Key          string            `json:"key"`
		Accumulation string            `json:"accumulation"`
		SQL          map[string]string `json:"sql"` // by accumulation mode
	} `json:"views"`
}

func readModuleData(t testing.TB) moduleData {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "terraform", "module.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d moduleData
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("terraform/module.json: %v", err)
	}
	return d
}

// tfModule is terraform/*.tf parsed, not evaluated: what only the text
// shows (what a plan does is asserted by terraform test).
type tfModule struct {
	src    map[string][]byte // by file name
	blocks []*hclsyntax.Block
}

func parseModule(t testing.TB) *tfModule {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "terraform", "*.tf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no terraform/*.tf files (err=%v)", err)
	}
	m := &tfModule{src: map[string][]byte{}}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclsyntax.ParseConfig(src, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("parse %s: %s", p, diags.Error())
		}
		m.src[filepath.Base(p)] = src
		m.blocks = append(m.blocks, f.Body.(*hclsyntax.Body).Blocks...)
	}
	return m
}

// blocksOf returns the top-level blocks of a type whose labels start with
// the given ones, e.g. blocksOf("resource", "google_logging_metric").
func (m *tfModule) blocksOf(typ string, labels ...string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range m.blocks {
		if b.Type == typ && len(b.Labels) >= len(labels) && slices.Equal(b.Labels[:len(labels)], labels) {
			out = append(out, b)
		}
	}
	return out
}

// resources maps each resource's address, "type.name", to its block.
func (m *tfModule) resources() map[string]*hclsyntax.Block {
	out := map[string]*hclsyntax.Block{}
	for _, b := range m.blocksOf("resource") {
		out[b.Labels[0]+"."+b.Labels[1]] = b
	}
	return out
}

// text is an expression's source text.
func (m *tfModule) text(e hclsyntax.Expression) string {
	r := e.Range()
	return string(r.SliceBytes(m.src[r.Filename]))
}

// attr returns the attribute at a path of nested blocks and a final
// attribute name, e.g. attr(b, "lifecycle", "prevent_destroy").
func attr(b *hclsyntax.Block, path ...string) (*hclsyntax.Attribute, bool) {
	body := b.Body
	for _, name := range path[:len(path)-1] {
		i := slices.IndexFunc(body.Blocks, func(b *hclsyntax.Block) bool { return b.Type == name })
		if i < 0 {
			return nil, false
		}
		body = body.Blocks[i].Body
	}
	a, ok := body.Attributes[path[len(path)-1]]
	return a, ok
}

// constant is the value of an expression of literals only (a variable's
// default, a tfvars value), or cty.NilVal.
func constant(e hclsyntax.Expression) cty.Value {
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal
	}
	return v
}

// What terraform test cannot see: it asserts on the resources a test names,
// so it cannot enumerate every string and every grant of the module. These
// checks read the module's text: no public principal is written anywhere
// (in quotes or heredocs: a comment may say "no allUsers" without granting
// it), no authoritative or v1 invoker grant type is used, and every IAM
// member is a reference to a service account or a Google service agent. The
// grants themselves (who gets which role on what) are asserted by
// terraform/tests/deployment.tftest.hcl.
func TestNoPublicPrincipalAnywhere(t *testing.T) {
	m := parseModule(t)
	found := 0
	for name, src := range m.src {
		toks, diags := hclsyntax.LexConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("lex %s: %s", name, diags.Error())
		}
		for _, tok := range toks {
			if tok.Type != hclsyntax.TokenQuotedLit && tok.Type != hclsyntax.TokenStringLit {
				continue
			}
			found++
			if publicPrincipal.Match(tok.Bytes) {
				t.Errorf("%s: %q grants access to the public", tok.Range, tok.Bytes)
			}
		}
	}
	if found == 0 {
		t.Fatal("no string literal seen: the lexer check is broken")
	}
	members := 0
	for addr, r := range m.resources() {
		switch typ := r.Labels[0]; {
		case authoritative.MatchString(typ):
			t.Errorf("%s: authoritative or v1 invoker grants are not used here; use google_cloud_run_v2_service_iam_member", addr)
		case iamMember.MatchString(typ):
			members++
			if a, ok := r.Body.Attributes["member"]; !ok {
				t.Errorf("%s: no member", addr)
			} else if ref := m.text(a.Expr); !memberRef.MatchString(ref) {
				t.Errorf("%s: member %q is not a service account or service agent reference", addr, ref)
			}
		}
	}
	if members == 0 {
		t.Fatal("no IAM member resource found")
	}
}

var (
	publicPrincipal = regexp.MustCompile(`(?i)all(authenticated)?users`)
	authoritative   = regexp.MustCompile(`^google_cloud_run_(v2_service_iam_(binding|policy)|service_iam_(member|binding|policy))$`)
	iamMember       = regexp.MustCompile(`^google_.*_iam_member$`)
	memberRef       = regexp.MustCompile(`^(google_service_account\.[a-z_]+(\[[^]]+\])?\.member|local\.(pubsub|cloudtasks)_service_agent|data\.google_storage_project_service_account\.[a-z_]+\.member)$`)
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

// The log-based metrics, the dashboard and the alert policies are checked
// by terraform/tests/monitoring.tftest.hcl, on the resources it names (a
// terraform test cannot enumerate the resources of a type): every one of
// the module must be named there.
func TestMonitoringIsAllChecked(t *testing.T) {
	checks := readRepoFile(t, "terraform/tests/monitoring.tftest.hcl")
	m := parseModule(t)
	n := 0
	for _, typ := range []string{"google_logging_metric", "google_monitoring_alert_policy"} {
		for _, r := range m.blocksOf("resource", typ) {
			n++
			if addr := typ + "." + r.Labels[1]; !regexp.MustCompile(`\b` + regexp.QuoteMeta(addr) + `\b`).MatchString(checks) {
				t.Errorf("%s is not checked by terraform/tests/monitoring.tftest.hcl: add it there", addr)
			}
		}
	}
	if n == 0 {
		t.Fatal("no metric or alert policy found")
	}
}

// The metrics count log lines the services write (their fields are checked
// by terraform test): a permanent ingest failure's reason starts with
// "permanent" (ingest_failed), the sweeper's "sweep finished" line
// carries the fields the sweep metrics extract, and AggregateOrders logs
// each order's fate (orders_accepted, orders_late_dropped) and whether a
// dead letter is a redelivery (orders_invalid leaves those out).
func TestLogLinesTheMetricsReadExist(t *testing.T) {
	handle, fates := readRepoFile(t, "internal/stream/handle.go"), readRepoFile(t, "internal/stream/processor.go")
	for _, c := range []struct{ src, text string }{
		{handle, `"order handled"`}, {handle, `"fate", o.Fate`}, {handle, `"aggregation", o.Aggregation`},
		{handle, `"message dead-lettered"`}, {handle, `"duplicate", r.Duplicate`},
		{fates, `Fate = "accepted"`}, {fates, `Fate = "too_late"`},
	} {
		if !strings.Contains(c.src, c.text) {
			t.Errorf("internal/stream no longer has %s: the orders metrics (terraform/logging_metrics.tf) filter on it and would count nothing", c.text)
		}
	}
	if src := readRepoFile(t, "internal/ingest/ingest.go"); !strings.Contains(src, `"permanent (not retried`) {
		t.Error(`internal/ingest no longer marks permanent failures with a reason starting "permanent": the ingest_failed metric counts nothing`)
	}
	paths, _ := filepath.Glob(filepath.Join(repoRoot(t), "internal", "sweep", "*.go"))
	found := false
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if src := string(b); !strings.HasSuffix(p, "_test.go") && strings.Contains(src, `"sweep finished"`) {
			found = true
			for _, field := range []string{`"found"`, `"ingested"`, `"failed"`, `"skipped"`} {
				if !strings.Contains(src, field) {
					t.Errorf("%s logs \"sweep finished\" without the field %s the metrics extract", p, field)
				}
			}
		}
	}
	if !found {
		t.Error("no \"sweep finished\" log line in internal/sweep: the sweeper metrics and alert would see nothing")
	}
}

// Every document keeps its payload in the string field json, which nothing
// queries: its single-field indexes are disabled in every group of
// var.firestore_collection_groups (terraform test checks the empty
// index_config and the groups), which must be exactly the collection groups
// the adapters write (internal/docstore/firestore asks for it): a group
// missing keeps its json indexed, a group that nothing writes is a retired
// layout's. Likewise the TTL policies: exactly the groups whose documents
// carry an ExpireAt. The packages' own tests hold their lists equal to the
// paths their suites write.
func TestPayloadFieldIsNotIndexed(t *testing.T) {
	d := readModuleData(t)
	tests := []struct {
		name      string
		want, got []string
	}{
		{"var.firestore_collection_groups", sorted(ledger.CollectionGroups(), stream.CollectionGroups()), d.FirestoreCollectionGroups},
		{"var.firestore_ttl_collection_groups", sorted(ledger.TTLCollectionGroups(), stream.TTLCollectionGroups()), d.FirestoreTTLCollectionGroups},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sorted(tc.got)); diff != "" {
				t.Errorf("%s against the groups internal/ledger and internal/stream write (-want +got):\n%s", tc.name, diff)
			}
		})
	}
	for _, c := range d.FirestoreTTLCollectionGroups {
		if !slices.Contains(d.FirestoreCollectionGroups, c) {
			t.Errorf("TTL group %s is not in var.firestore_collection_groups, so its json stays indexed", c)
		}
	}
}

// One google_firestore_field sets json, for every group. And the stream's
// tick lists a generation's dedup records with ListTag, an equality query
// on the field tag that only its automatic single-field index serves: no
// field resource may exempt it, in any collection group, or every fold
// fails with FAILED_PRECONDITION.
func TestFirestoreFields(t *testing.T) {
	m := parseModule(t)
	fields := map[string][]string{}
	for _, r := range m.blocksOf("resource", "google_firestore_field") {
		f := constant(r.Body.Attributes["field"].Expr)
		if !f.Type().Equals(cty.String) {
			t.Errorf("google_firestore_field.%s: field must be a literal, which this test can read", r.Labels[1])
			continue
		}
		fields[f.AsString()] = append(fields[f.AsString()], r.Labels[1])
	}
	if got := fields["json"]; len(got) != 1 {
		t.Errorf("google_firestore_field resources for json: %v, want one iterating over the collection groups", got)
	}
	if got := fields["tag"]; len(got) > 0 {
		t.Errorf("google_firestore_field %v configures the field tag: ListTag needs its automatic single-field index", got)
	}
}

// Each reject code gets a metric, so "how many rows were rejected, and why"
// can be charted per reason; a contract change that adds a rule must add
// its code to var.reject_codes.
func TestRejectCodeMetricsCoverTheContracts(t *testing.T) {
	reg, err := contract.Default()
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(readModuleData(t).RejectCodes))
	if diff := cmp.Diff(ingest.RejectCodes(reg), got); diff != "" {
		t.Errorf("var.reject_codes default (-codes the ingest can log +terraform):\n%s", diff)
	}
}

// check fails the test on err.
func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
