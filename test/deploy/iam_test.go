package deploy

import (
	"regexp"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

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
