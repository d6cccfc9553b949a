package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The limits internal/config enforces on INGEST_DEADLINE (config.EventDeadline
// and config.DeadlineMargin), restated so that this package does not need
// internal/config to compile.
const (
	eventDeadline        = 540 * time.Second
	configDeadlineMargin = 30 * time.Second
)

// One attempt's own deadline stays a margin below the request timeout, so the
// ledger write recording a failed attempt happens before Cloud Run cuts the
// request. Both derive from one number in main.tf, so they cannot drift.
func TestIngestDeadlineLeavesAMarginBelowTheTimeout(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	fns := ev.ctx.Variables["local"].GetAttr("functions")
	for _, fn := range []string{"IngestCSV", "SweepLanding"} {
		t.Run(fn, func(t *testing.T) {
			f := fns.GetAttr(fn)
			timeout, err := time.ParseDuration(f.GetAttr("timeout").AsString())
			if err != nil {
				t.Fatalf("timeout: %v", err)
			}
			deadline, err := time.ParseDuration(f.GetAttr("env").GetAttr("INGEST_DEADLINE").AsString())
			if err != nil {
				t.Fatalf("INGEST_DEADLINE: %v", err)
			}
			lease, err := time.ParseDuration(f.GetAttr("env").GetAttr("LEDGER_LEASE").AsString())
			if err != nil {
				t.Fatalf("LEDGER_LEASE: %v", err)
			}
			if timeout != eventDeadline {
				t.Errorf("timeout %s, want %s", timeout, eventDeadline)
			}
			if deadline != timeout-60*time.Second {
				t.Errorf("INGEST_DEADLINE %s, want the timeout %s less 60s", deadline, timeout)
			}
			if deadline > eventDeadline-configDeadlineMargin || deadline >= lease {
				t.Errorf("INGEST_DEADLINE %s must be at most %s and below LEDGER_LEASE %s (internal/config refuses it)", deadline, eventDeadline-configDeadlineMargin, lease)
			}
			if refs := refsOf(objectItem(t, objectItem(t, cfg.Locals["functions"].Expr, fn), "timeout")); !refs["local.event_timeout_seconds"] {
				t.Errorf("%s timeout reads %v, want local.event_timeout_seconds", fn, keysOf(refs))
			}
		})
	}
	if refs := refsOf(envExpr(t, cfg, "ingest_env", "INGEST_DEADLINE")); !refs["local.event_timeout_seconds"] {
		t.Errorf("INGEST_DEADLINE reads %v: derive it from local.event_timeout_seconds, as the timeouts are", keysOf(refs))
	}
}

// SweepLanding: a scheduled function that ingests landing objects whose
// events were all lost, through the IngestCSV path, with the same grants.
func TestSweeper(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	f := ev.ctx.Variables["local"].GetAttr("functions").GetAttr("SweepLanding")
	got := map[string]string{}
	for _, k := range []string{"service", "account", "invoker", "trigger", "timeout"} {
		got[k] = f.GetAttr(k).AsString()
	}
	got["concurrency"] = f.GetAttr("concurrency").AsBigFloat().String()
	want := map[string]string{
		"service": "alpipe-sweeper", "account": "alpipe-sweeper", "invoker": "alpipe-sweeper-run",
		"trigger": "sweep", "timeout": "540s", "concurrency": "1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SweepLanding (-want +got):\n%s", diff)
	}
	if n := ev.vars["max_instances"].GetAttr("SweepLanding").AsBigFloat().String(); n != "1" {
		t.Errorf("max_instances.SweepLanding = %s, want 1: one run at a time", n)
	}

	job := cfg.lookup(t, "google_cloud_scheduler_job.sweep")
	each := [2]cty.Value{cty.StringVal("SweepLanding"), f}
	if got := traversal(job.Block.Body.Attributes["schedule"].Expr); got != "var.sweep_schedule" {
		t.Errorf("schedule = %s, want var.sweep_schedule", got)
	}
	if got := ev.vars["sweep_schedule"].AsString(); got != "*/15 * * * *" {
		t.Errorf("sweep_schedule default %q, want every 15 minutes", got)
	}
	if got := ev.str(t, job.Block.Body.Attributes["attempt_deadline"].Expr, &each); got != "540s" {
		t.Errorf("attempt_deadline = %s, want the service timeout 540s", got)
	}

	// The same grants as IngestCSV: it reads (lists and gets) landing, writes
	// quarantine and staging, runs load and query jobs, uses Firestore.
	grants := ev.ctx.Variables["local"].GetAttr("runtime_grants")
	if !grants.GetAttr("SweepLanding").RawEquals(grants.GetAttr("IngestCSV")) {
		t.Errorf("SweepLanding grants %#v differ from IngestCSV's %#v", grants.GetAttr("SweepLanding"), grants.GetAttr("IngestCSV"))
	}
	if role := grants.GetAttr("SweepLanding").GetAttr("buckets").GetAttr("landing").AsString(); role != "roles/storage.objectViewer" {
		t.Errorf("landing role %s: the sweeper lists and reads objects, objectViewer holds both and nothing more", role)
	}
	bucketGrants := keysOf(ev.forEach(t, cfg.lookup(t, "google_storage_bucket_iam_member.runtime")))
	for _, k := range []string{"SweepLanding/landing", "SweepLanding/quarantine", "SweepLanding/staging"} {
		if !contains(bucketGrants, k) {
			t.Errorf("no bucket grant %s (have %v)", k, bucketGrants)
		}
	}
	if !contains(keysOf(ev.forEach(t, cfg.lookup(t, "google_project_iam_member.firestore_user"))), "SweepLanding") {
		t.Error("the sweeper reads the ledger: it needs the Firestore grant")
	}
}

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
