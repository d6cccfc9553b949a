package deploy

import (
	"regexp"
	"testing"
)

// What terraform test cannot see: it asserts on the resources a test names,
// so it cannot enumerate every string and every grant of the module. These
// checks read the module's text: no public principal is written anywhere,
// no authoritative or v1 invoker grant type is used, and every IAM member is
// a reference to a service account or a Google service agent. The grants
// themselves (who gets which role on what) are asserted by
// terraform/tests/deployment.tftest.hcl.
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
	for _, typ := range []string{"google_cloud_run_v2_service_iam_binding", "google_cloud_run_v2_service_iam_policy", "google_cloud_run_service_iam_member", "google_cloud_run_service_iam_binding", "google_cloud_run_service_iam_policy"} {
		if rs := cfg.ofType(typ); len(rs) > 0 {
			t.Errorf("%s: authoritative or v1 invoker grants are not used here; use google_cloud_run_v2_service_iam_member", rs[0].addr())
		}
	}
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

var publicPrincipal = regexp.MustCompile(`(?i)all(authenticated)?users`)

var (
	iamMember = regexp.MustCompile(`^google_.*_iam_member$`)
	memberRef = regexp.MustCompile(`^(google_service_account\.[a-z_]+(\[[^]]+\])?\.member|local\.(pubsub|cloudtasks)_service_agent|data\.google_storage_project_service_account\.[a-z_]+\.member)$`)
)
