package deploy

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func lexTokens(t testing.TB, name string, src []byte) hclsyntax.Tokens {
	t.Helper()
	toks, diags := hclsyntax.LexConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("lex %s: %s", name, diags.Error())
	}
	return toks
}

// isStringToken reports literal text inside quotes or heredocs (comments
// are not strings: a comment may say "no allUsers" without granting it).
func isStringToken(tok hclsyntax.Token) bool {
	return tok.Type == hclsyntax.TokenQuotedLit || tok.Type == hclsyntax.TokenStringLit
}
