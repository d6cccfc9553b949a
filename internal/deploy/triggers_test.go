package deploy

import (
	"regexp"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each function is called by exactly one identity: the one its trigger
// authenticates as, which is also the one holding roles/run.invoker on the
// service. The tests below check the three triggers and the grant against
// each other.

const (
	wantInvokerSA = "google_service_account.invoker[each.key]"
	wantService   = "google_cloud_run_v2_service.function[each.key]"
)

func TestPushSubscriptionsAuthenticateWithOIDC(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	push := 0
	for _, r := range cfg.ofType("google_pubsub_subscription") {
		pc := nested(r.Block, "push_config")
		if pc == nil {
			continue
		}
		push++
		t.Run(r.addr(), func(t *testing.T) {
			oidc := nested(pc, "oidc_token")
			if oidc == nil {
				t.Fatal("push_config has no oidc_token: Pub/Sub would push unauthenticated requests, which Cloud Run refuses")
			}
			checks := []struct {
				name string
				path []string
				want string
			}{
				{name: "token identity", path: []string{"push_config", "oidc_token", "service_account_email"}, want: wantInvokerSA + ".email"},
				{name: "token audience", path: []string{"push_config", "oidc_token", "audience"}, want: wantService + ".uri"},
				{name: "endpoint", path: []string{"push_config", "push_endpoint"}, want: wantService + ".uri"},
			}
			for _, c := range checks {
				a, ok := attr(r.Block, c.path...)
				if !ok {
					t.Errorf("%s: %v missing", c.name, c.path)
					continue
				}
				if got := traversal(a.Expr); got != c.want {
					t.Errorf("%s = %q, want %q", c.name, got, c.want)
				}
			}
			if block(pc.Body, "no_wrapper") != nil {
				t.Error("push_config.no_wrapper set: AggregateOrders needs the wrapped envelope (messageId, attributes, deliveryAttempt)")
			}
			// The push targets exactly the services that are deployed.
			if got, want := keysOf(ev.forEach(t, r)), []string{"AggregateOrders"}; !cmp.Equal(got, want) {
				t.Errorf("push subscriptions for %v, want %v", got, want)
			}
		})
	}
	if push == 0 {
		t.Fatal("no push subscription found: AggregateOrders would receive nothing")
	}
}

func TestSchedulerJobsAuthenticateWithOIDC(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	jobs := cfg.ofType("google_cloud_scheduler_job")
	if len(jobs) == 0 {
		t.Fatal("no Cloud Scheduler job: nothing would advance the watermark")
	}
	// Which function each job resource calls.
	targets := map[string][]string{
		"google_cloud_scheduler_job.tick":  {"AdvanceWatermark"},
		"google_cloud_scheduler_job.sweep": {"SweepLanding"},
	}
	var names []string
	for _, r := range jobs {
		names = append(names, r.addr())
	}
	sort.Strings(names)
	if diff := cmp.Diff(keysOf(targets), names); diff != "" {
		t.Errorf("scheduler job resources (-want +got):\n%s", diff)
	}
	for _, r := range jobs {
		t.Run(r.addr(), func(t *testing.T) {
			if nested(r.Block, "http_target") == nil {
				t.Fatal("scheduler job without http_target")
			}
			if nested(r.Block, "http_target", "oidc_token") == nil {
				t.Fatal("http_target has no oidc_token: the tick would be refused by Cloud Run (or the service would have to be public)")
			}
			if nested(r.Block, "http_target", "oauth_token") != nil {
				t.Error("http_target uses an OAuth token: Cloud Run expects an OIDC identity token")
			}
			checks := map[string]string{
				"http_target.oidc_token.service_account_email": wantInvokerSA + ".email",
				"http_target.oidc_token.audience":              wantService + ".uri",
				"http_target.uri":                              wantService + ".uri",
			}
			paths := map[string][]string{
				"http_target.oidc_token.service_account_email": {"http_target", "oidc_token", "service_account_email"},
				"http_target.oidc_token.audience":              {"http_target", "oidc_token", "audience"},
				"http_target.uri":                              {"http_target", "uri"},
			}
			for name, want := range checks {
				a, ok := attr(r.Block, paths[name]...)
				if !ok {
					t.Errorf("%s missing", name)
					continue
				}
				if got := traversal(a.Expr); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if a, ok := attr(r.Block, "http_target", "http_method"); !ok || ev.str(t, a.Expr, nil) != "POST" {
				t.Error("http_target.http_method must be POST (the scheduled functions are HTTP functions called with a POST)")
			}
			if got, want := keysOf(ev.forEach(t, r)), targets[r.addr()]; !cmp.Equal(got, want) {
				t.Errorf("scheduler jobs for %v, want %v", got, want)
			}
			if a, ok := r.Block.Body.Attributes["attempt_deadline"]; !ok || traversal(a.Expr) != "each.value.timeout" {
				t.Error("attempt_deadline must be the service's own timeout (each.value.timeout)")
			}
		})
	}
}

func TestEventarcTriggerDeliversFinalizedObjectsOfLanding(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	triggers := cfg.ofType("google_eventarc_trigger")
	if len(triggers) != 1 {
		t.Fatalf("got %d Eventarc triggers, want 1 (IngestCSV)", len(triggers))
	}
	r := triggers[0]
	if got, want := keysOf(ev.forEach(t, r)), []string{"IngestCSV"}; !cmp.Equal(got, want) {
		t.Fatalf("trigger for %v, want %v", got, want)
	}
	criteria := map[string]string{}
	for _, b := range r.Block.Body.Blocks {
		if b.Type != "matching_criteria" {
			continue
		}
		a, v := b.Body.Attributes["attribute"], b.Body.Attributes["value"]
		key := ev.str(t, a.Expr, nil)
		if key == "type" {
			criteria[key] = ev.str(t, v.Expr, nil)
		} else {
			criteria[key] = traversal(v.Expr)
		}
	}
	want := map[string]string{
		"type":   "google.cloud.storage.object.v1.finalized",
		"bucket": `google_storage_bucket.bucket["landing"].name`,
	}
	if diff := cmp.Diff(want, criteria); diff != "" {
		t.Errorf("matching criteria (-want +got):\n%s", diff)
	}
	if a, ok := attr(r.Block, "service_account"); !ok || traversal(a.Expr) != wantInvokerSA+".email" {
		t.Errorf("service_account must be %s.email, the identity holding run.invoker", wantInvokerSA)
	}
	if a, ok := attr(r.Block, "destination", "cloud_run_service", "service"); !ok || traversal(a.Expr) != wantService+".name" {
		t.Errorf("destination must be %s", wantService)
	}
	receiver := cfg.lookup(t, "google_project_iam_member.trigger_event_receiver")
	if a := receiver.Block.Body.Attributes["role"]; ev.str(t, a.Expr, nil) != "roles/eventarc.eventReceiver" {
		t.Error("the trigger identity needs roles/eventarc.eventReceiver")
	}
	agent := cfg.lookup(t, "google_project_iam_member.gcs_agent_pubsub_publisher")
	if a := agent.Block.Body.Attributes["role"]; ev.str(t, a.Expr, nil) != "roles/pubsub.publisher" {
		t.Error("the Cloud Storage service agent needs roles/pubsub.publisher for storage triggers")
	}
}

func TestOnlyTheTriggerIdentityMayInvokeEachService(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	for _, typ := range []string{"google_cloud_run_v2_service_iam_binding", "google_cloud_run_v2_service_iam_policy", "google_cloud_run_service_iam_member", "google_cloud_run_service_iam_binding", "google_cloud_run_service_iam_policy"} {
		if rs := cfg.ofType(typ); len(rs) > 0 {
			t.Errorf("%s: authoritative or v1 invoker grants are not used here; use google_cloud_run_v2_service_iam_member", rs[0].addr())
		}
	}
	var invokers []resource
	for _, g := range cfg.ofType("google_cloud_run_v2_service_iam_member") {
		role := g.Block.Body.Attributes["role"]
		if traversal(role.Expr) == "google_project_iam_custom_role.image_deployer.name" {
			checkDeployerRole(t, ev, cfg)
			continue
		}
		switch r := ev.str(t, role.Expr, nil); r {
		case "roles/run.invoker":
			invokers = append(invokers, g)
		default:
			t.Errorf("%s grants %s on the services: only the trigger identities may invoke, and only the deployer role may update", g.addr(), r)
		}
	}
	if len(invokers) != 1 {
		t.Fatalf("got %d run.invoker grant resources, want 1 iterating over the services", len(invokers))
	}
	g := invokers[0]
	if got := traversal(g.Block.Body.Attributes["member"].Expr); got != wantInvokerSA+".member" {
		t.Errorf("member = %q, want %s.member", got, wantInvokerSA)
	}
	if got := traversal(g.Block.Body.Attributes["name"].Expr); got != wantService+".name" {
		t.Errorf("name = %q, want %s.name", got, wantService)
	}
	services := keysOf(ev.forEach(t, cfg.lookup(t, "google_cloud_run_v2_service.function")))
	if got := keysOf(ev.forEach(t, g)); !cmp.Equal(got, services) {
		t.Errorf("invoker grants for %v, services %v: every service needs exactly one invoker", got, services)
	}
}

// checkDeployerRole verifies the pipeline's custom role can roll a service
// forward but not invoke, create, delete it or change who may invoke it.
func checkDeployerRole(t *testing.T, ev *evaluator, cfg *tfConfig) {
	t.Helper()
	role := cfg.lookup(t, "google_project_iam_custom_role.image_deployer")
	perms := map[string]bool{}
	for _, p := range ev.eval(t, role.Block.Body.Attributes["permissions"].Expr, nil).AsValueSlice() {
		perms[p.AsString()] = true
	}
	if !perms["run.services.update"] {
		t.Error("deployer role cannot update services")
	}
	for _, p := range []string{"run.routes.invoke", "run.services.create", "run.services.delete", "run.services.setIamPolicy"} {
		if perms[p] {
			t.Errorf("deployer role has %s", p)
		}
	}
}

var publicPrincipal = regexp.MustCompile(`(?i)all(authenticated)?users`)

func TestNoPublicPrincipalAnywhere(t *testing.T) {
	cfg := loadTerraform(t)
	found := 0
	for name, f := range cfg.Files {
		for _, tok := range lexTokens(t, name, f.Bytes) {
			if !isStringToken(tok) {
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
	// Every IAM member is a reference to a service account or a Google
	// service agent, never a literal principal typed by hand.
	members := 0
	for _, r := range cfg.Resources {
		if !iamMember.MatchString(r.Type) {
			continue
		}
		members++
		a, ok := r.Block.Body.Attributes["member"]
		if !ok {
			t.Errorf("%s: no member", r.addr())
			continue
		}
		ref := traversal(a.Expr)
		if !memberRef.MatchString(ref) {
			t.Errorf("%s: member %q is not a service account or service agent reference", r.addr(), ref)
		}
	}
	if members == 0 {
		t.Fatal("no IAM member resource found")
	}
}

var (
	iamMember = regexp.MustCompile(`^google_.*_iam_member$`)
	memberRef = regexp.MustCompile(`^(google_service_account\.[a-z_]+(\[[^]]+\])?\.member|local\.pubsub_service_agent|data\.google_storage_project_service_account\.[a-z_]+\.member)$`)
)
