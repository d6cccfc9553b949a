package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

var functionTargets = []string{"AdvanceWatermark", "AggregateOrders", "IngestCSV", "SweepLanding"}

func TestEachServiceHasItsOwnServiceAccount(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	services := cfg.ofType("google_cloud_run_v2_service")
	if len(services) != 1 {
		t.Fatalf("got %d Cloud Run service resources, want one iterating over the functions", len(services))
	}
	svc := services[0]
	keys := ev.forEach(t, svc)
	if diff := cmp.Diff(functionTargets, keysOf(keys)); diff != "" {
		t.Fatalf("deployed functions (-want +got):\n%s", diff)
	}
	a, ok := attr(svc.Block, "template", "service_account")
	if !ok {
		t.Fatal("template.service_account missing: the revision would run as the default compute account (Editor)")
	}
	m := regexp.MustCompile(`^google_service_account\.([a-z_]+)\[each\.key\]\.email$`).FindStringSubmatch(traversal(a.Expr))
	if m == nil {
		t.Fatalf("template.service_account = %q, want google_service_account.<name>[each.key].email", traversal(a.Expr))
	}
	runtimeSA := cfg.lookup(t, "google_service_account."+m[1])
	saKeys := ev.forEach(t, runtimeSA)

	// Every account (runtime and invokers) must be distinct, so no two
	// services, and no service and trigger, share an identity.
	owner := map[string]string{}
	for _, sa := range cfg.ofType("google_service_account") {
		if _, ok := sa.Block.Body.Attributes["for_each"]; !ok {
			id := ev.str(t, sa.Block.Body.Attributes["account_id"].Expr, nil)
			if prev, dup := owner[id]; dup {
				t.Errorf("account %q used by both %s and %s", id, prev, sa.addr())
			}
			owner[id] = sa.addr()
			continue
		}
		for k, v := range ev.forEach(t, sa) {
			each := [2]cty.Value{cty.StringVal(k), v}
			id := ev.str(t, sa.Block.Body.Attributes["account_id"].Expr, &each)
			if prev, dup := owner[id]; dup {
				t.Errorf("account %q used by both %s and %s[%q]", id, prev, sa.addr(), k)
			}
			owner[id] = sa.addr() + "[" + strconv.Quote(k) + "]"
		}
	}
	for k := range keys {
		if _, ok := saKeys[k]; !ok {
			t.Errorf("service %s has no runtime account in %s", k, runtimeSA.addr())
		}
	}
	if len(owner) < 2*len(functionTargets) {
		t.Errorf("%d service accounts, want at least %d (a runtime and an invoker per function)", len(owner), 2*len(functionTargets))
	}
	// FUNCTION_TARGET selects the function: it must be the key itself.
	env := nested(svc.Block, "template", "containers")
	found := false
	for _, b := range env.Body.Blocks {
		if b.Type != "env" {
			continue
		}
		if n := b.Body.Attributes["name"]; n != nil && ev.str(t, n.Expr, nil) == "FUNCTION_TARGET" {
			found = true
			if got := traversal(b.Body.Attributes["value"].Expr); got != "each.key" {
				t.Errorf("FUNCTION_TARGET = %s, want each.key", got)
			}
		}
	}
	if !found {
		t.Error("no FUNCTION_TARGET env: cmd/server would serve every function")
	}
	if a, ok := attr(svc.Block, "ingress"); !ok || !strings.HasPrefix(ev.str(t, a.Expr, nil), "INGRESS_TRAFFIC_INTERNAL") {
		t.Error("ingress must be restricted to internal traffic (and the load balancer at most)")
	}
}

func TestIngestTimeoutIs540Seconds(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	svc := cfg.lookup(t, "google_cloud_run_v2_service.function")
	a, ok := attr(svc.Block, "template", "timeout")
	if !ok {
		t.Fatal("template.timeout missing (the Cloud Run default is 300 s)")
	}
	tests := []struct {
		name string
		want string
	}{
		{name: "IngestCSV", want: "540s"},
		{name: "SweepLanding", want: "540s"},
		{name: "AdvanceWatermark", want: "60s"},
		{name: "AggregateOrders", want: "60s"}, // the push ack deadline
	}
	keys := ev.forEach(t, svc)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			each := [2]cty.Value{cty.StringVal(tc.name), keys[tc.name]}
			if got := ev.str(t, a.Expr, &each); got != tc.want {
				t.Errorf("timeout = %q, want %q", got, tc.want)
			}
		})
	}
	// The lease must outlive the deadline, or a redelivery could take over a
	// file still loading; check with Go's parser, which the service uses.
	lease := ev.vars["ledger_lease"].AsString()
	d, err := time.ParseDuration(lease)
	if err != nil || d <= 540*time.Second {
		t.Errorf("ledger_lease default %q (%v, err %v) must parse and exceed 540s", lease, d, err)
	}
}

// The environment each service gets must be exactly what its configuration
// reads (internal/config), with the production backends selected.
func TestServiceEnvironment(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	fns := ev.ctx.Variables["local"].GetAttr("functions")
	backend := []string{"BIGQUERY_DATASET", "BIGQUERY_LOCATION", "FIRESTORE_DATABASE", "GOOGLE_CLOUD_PROJECT", "STATE_STORE", "WAREHOUSE"}
	stream := []string{
		"ACCUMULATION", "AGGREGATION", "AGGREGATION_KEY", "ALLOWED_LATENESS", "BATCH_MAX_ORDERS", "BATCH_WAIT", "EARLY_DELAY",
		"IDLE_TIMEOUT", "LATE_DELAY", "MAX_CLOCK_SKEW", "OUT_OF_ORDERNESS", "STATE_SHARDS", "TICK_LEASE", "WINDOW_SIZE",
	}
	ingest := []string{
		"INGEST_DEADLINE", "LANDING_BUCKET", "LANDING_PREFIXES", "LEDGER_LEASE", "QUARANTINE_BUCKET", "QUARANTINE_PREFIX",
		"STAGING_BUCKET", "STAGING_PREFIX",
	}
	sweep := []string{"SWEEP_CONCURRENCY", "SWEEP_GRACE", "SWEEP_MAX_OBJECTS", "SWEEP_WINDOW"}
	want := map[string][]string{
		"IngestCSV":        sorted(backend, ingest),
		"AggregateOrders":  sorted(backend, stream),
		"AdvanceWatermark": sorted(backend, stream),
		"SweepLanding":     sorted(backend, ingest, sweep),
	}
	read := configEnvNames(t)
	// A group of settings the configuration does not read at all yet (it is
	// written in parallel, function by function) is reported, not failed;
	// once one name of a group is read, every name of it must be.
	groupRead := map[string]bool{}
	for _, group := range [][]string{backend, stream, ingest, sweep} {
		for _, k := range group {
			if read[k] {
				for _, k := range group {
					groupRead[k] = true
				}
				break
			}
		}
	}
	for fn, wantKeys := range want {
		t.Run(fn, func(t *testing.T) {
			env := fns.GetAttr(fn).GetAttr("env")
			got := keysOf(env.AsValueMap())
			if diff := cmp.Diff(wantKeys, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			var unchecked []string
			for _, k := range got {
				switch {
				case read[k]:
				case groupRead[k]:
					t.Errorf("%s is set but no env tag in internal/config reads it", k)
				default:
					unchecked = append(unchecked, k)
				}
			}
			if len(unchecked) > 0 {
				t.Logf("internal/config reads none of %v yet; not checked against it", unchecked)
			}
			vals := env.AsValueMap()
			if s := vals["STATE_STORE"]; s.AsString() != "firestore" {
				t.Errorf("STATE_STORE = %q, want firestore", s.AsString())
			}
			if s := vals["WAREHOUSE"]; s.AsString() != "bigquery" {
				t.Errorf("WAREHOUSE = %q, want bigquery", s.AsString())
			}
		})
	}

	// Stream defaults as the spec gives them, in a form time.ParseDuration
	// and strconv accept.
	env := fns.GetAttr("AggregateOrders").GetAttr("env").AsValueMap()
	defaults := map[string]string{
		"AGGREGATION": "ventas_hora_pais", "AGGREGATION_KEY": "pais", "WINDOW_SIZE": "1h",
		"OUT_OF_ORDERNESS": "10m", "IDLE_TIMEOUT": "5m", "EARLY_DELAY": "60s", "ALLOWED_LATENESS": "2h",
		"LATE_DELAY": "0s", "ACCUMULATION": "ACCUMULATING", "STATE_SHARDS": "8", "TICK_LEASE": "2m",
		"MAX_CLOCK_SKEW": "24h", "BATCH_WAIT": "10ms", "BATCH_MAX_ORDERS": "200",
	}
	for k, v := range defaults {
		if got := env[k].AsString(); got != v {
			t.Errorf("%s = %q, want the spec default %q", k, got, v)
		}
	}
	for _, k := range []string{"WINDOW_SIZE", "OUT_OF_ORDERNESS", "IDLE_TIMEOUT", "EARLY_DELAY", "ALLOWED_LATENESS", "LATE_DELAY", "TICK_LEASE", "MAX_CLOCK_SKEW", "BATCH_WAIT"} {
		if _, err := time.ParseDuration(env[k].AsString()); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for _, k := range []string{"STATE_SHARDS", "BATCH_MAX_ORDERS"} {
		if _, err := strconv.Atoi(env[k].AsString()); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}

	// Ingest and sweeper defaults as interfaces agree them, in the form
	// internal/config parses; the sweeper ingests exactly like IngestCSV.
	ingestEnv := fns.GetAttr("IngestCSV").GetAttr("env").AsValueMap()
	sweepEnv := fns.GetAttr("SweepLanding").GetAttr("env").AsValueMap()
	known := map[string]string{
		"LANDING_PREFIXES": "exportaciones/", "INGEST_DEADLINE": "480s", "LEDGER_LEASE": "10m",
		"QUARANTINE_PREFIX": "cuarentena/", "STAGING_PREFIX": "staging/",
	}
	for k, v := range known {
		if got := ingestEnv[k]; !got.IsKnown() || got.AsString() != v {
			t.Errorf("IngestCSV %s = %#v, want %q", k, got, v)
		}
	}
	for _, k := range ingest {
		if !ingestEnv[k].RawEquals(sweepEnv[k]) {
			t.Errorf("SweepLanding %s = %#v, IngestCSV has %#v: the sweeper must ingest like IngestCSV", k, sweepEnv[k], ingestEnv[k])
		}
	}
	sweepDefaults := map[string]string{"SWEEP_WINDOW": "72h", "SWEEP_GRACE": "30m", "SWEEP_MAX_OBJECTS": "100", "SWEEP_CONCURRENCY": "2"}
	for k, v := range sweepDefaults {
		if got := sweepEnv[k].AsString(); got != v {
			t.Errorf("%s = %q, want the agreed default %q", k, got, v)
		}
	}
	for _, k := range []string{"SWEEP_WINDOW", "SWEEP_GRACE"} {
		if _, err := time.ParseDuration(sweepEnv[k].AsString()); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for _, k := range []string{"LANDING_BUCKET", "STAGING_BUCKET", "QUARANTINE_BUCKET"} {
		if got := traversal(envExpr(t, cfg, "ingest_env", k)); !strings.HasPrefix(got, "google_storage_bucket.bucket[") {
			t.Errorf("%s = %s, want the managed bucket's name (google_storage_bucket.bucket[...].name)", k, got)
		}
	}
	if got := traversal(envExpr(t, cfg, "ingest_env", "LANDING_BUCKET")); got != `google_storage_bucket.bucket["landing"].name` {
		t.Errorf("LANDING_BUCKET = %s, want the landing bucket Eventarc watches", got)
	}
	// Both stream services must agree on every setting.
	if !fns.GetAttr("AggregateOrders").GetAttr("env").RawEquals(fns.GetAttr("AdvanceWatermark").GetAttr("env")) {
		t.Error("AggregateOrders and AdvanceWatermark get different stream settings")
	}
}

func sorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Strings(out)
	return out
}

// configEnvNames collects the variable names of every `env:"..."` struct
// tag in internal/config, read from source so that this test does not
// depend on that package compiling.
func configEnvNames(t testing.TB) map[string]bool {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "internal", "config")
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, 0)
	if err != nil {
		t.Fatalf("parse internal/config: %v", err)
	}
	names := map[string]bool{}
	for _, pkg := range pkgs {
		for fname, f := range pkg.Files {
			if strings.HasSuffix(fname, "_test.go") {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				field, ok := n.(*ast.Field)
				if !ok || field.Tag == nil {
					return true
				}
				tag, err := strconv.Unquote(field.Tag.Value)
				if err != nil {
					return true
				}
				if env, ok := reflect.StructTag(tag).Lookup("env"); ok {
					name := strings.TrimSpace(strings.SplitN(env, ",", 2)[0])
					if name != "" {
						names[name] = true
					}
				}
				return true
			})
		}
	}
	if len(names) == 0 {
		t.Fatal("no env tags found in internal/config")
	}
	return names
}
