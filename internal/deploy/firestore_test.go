package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// The pipeline keeps its state in a named database of its own, so its TTL
// policies and index exemptions touch nothing of the web application's
// (default) database, and every service is pointed at that database.
func TestFirestoreDatabaseIsAlpipesOwn(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	if got := ev.vars["firestore_database"].AsString(); got != "alpipe" {
		t.Errorf("firestore_database default %q, want alpipe", got)
	}
	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{name: "the default", value: "alpipe", ok: true},
		{name: "another named database", value: "alpipe-test", ok: true},
		{name: "the application's database", value: "(default)", ok: false},
		{name: "too short", value: "ab", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := validationsHold(t, cfg, "firestore_database", cty.StringVal(tc.value)); got != tc.ok {
				t.Errorf("validation of %q passes = %v, want %v", tc.value, got, tc.ok)
			}
		})
	}

	db := cfg.lookup(t, "google_firestore_database.state")
	if got := traversal(db.Block.Body.Attributes["name"].Expr); got != "var.firestore_database" {
		t.Errorf("database name = %s, want var.firestore_database", got)
	}
	if got := traversal(envExpr(t, cfg, "backend_env", "FIRESTORE_DATABASE")); got != "google_firestore_database.state.name" {
		t.Errorf("FIRESTORE_DATABASE = %s, want google_firestore_database.state.name", got)
	}
	for _, r := range cfg.ofType("google_firestore_field") {
		if got := traversal(r.Block.Body.Attributes["database"].Expr); got != "google_firestore_database.state.name" {
			t.Errorf("%s: database = %s, want google_firestore_database.state.name (the default database is not alpipe's)", r.addr(), got)
		}
	}
	cond, ok := attr(cfg.lookup(t, "google_project_iam_member.firestore_user").Block, "condition", "expression")
	if !ok || !refsOf(cond.Expr)["google_firestore_database.state.name"] {
		t.Error("the datastore.user grant must be conditioned on alpipe's database")
	}
}

// Every document keeps its payload in the string field json, which nothing
// queries: its single-field indexes are disabled in every collection group
// the adapters write (internal/docstore/firestore asks for it).
func TestPayloadFieldIsNotIndexed(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	var payload []resource
	for _, r := range cfg.ofType("google_firestore_field") {
		if ev.str(t, r.Block.Body.Attributes["field"].Expr, nil) == "json" {
			payload = append(payload, r)
		}
	}
	if len(payload) != 1 {
		t.Fatalf("got %d google_firestore_field resources for json, want 1 iterating over the collection groups", len(payload))
	}
	r := payload[0]
	ic := nested(r.Block, "index_config")
	if ic == nil || len(ic.Body.Blocks) > 0 || len(ic.Body.Attributes) > 0 {
		t.Error("json needs an empty index_config {} (all single-field indexes off)")
	}
	if nested(r.Block, "ttl_config") != nil {
		t.Error("json is no TTL field")
	}
	groups := keysOf(ev.forEach(t, r))
	if got := traversal(r.Block.Body.Attributes["collection"].Expr); got != "each.key" {
		t.Errorf("collection = %s, want each.key", got)
	}

	ttl := map[string]bool{}
	for _, v := range ev.vars["firestore_ttl_collection_groups"].AsValueSlice() {
		ttl[v.AsString()] = true
	}
	written := adapterCollections(t)
	for c := range ttl {
		written[c] = "var.firestore_ttl_collection_groups"
	}
	var missing []string
	for c, where := range written {
		if !contains(groups, c) {
			missing = append(missing, c+" ("+where+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("collection groups the adapters write but var.firestore_collection_groups lacks, so their json stays indexed: %v", missing)
	}
}

// validationsHold evaluates every validation of a variable with value.
func validationsHold(t *testing.T, cfg *tfConfig, name string, value cty.Value) bool {
	t.Helper()
	v, ok := cfg.Variables[name]
	if !ok {
		t.Fatalf("variable %s missing", name)
	}
	ev := deployed(t, cfg, map[string]cty.Value{name: value})
	n := 0
	for _, b := range v.Body.Blocks {
		if b.Type != "validation" {
			continue
		}
		n++
		if !ev.eval(t, b.Body.Attributes["condition"].Expr, nil).True() {
			return false
		}
	}
	if n == 0 {
		t.Fatalf("variable %s has no validation", name)
	}
	return true
}

// adapterCollections finds the Firestore collection IDs the ledger and the
// stream write, from their source: the ledger's *Collection constants, and
// the collection segments of the path literals the stream concatenates
// (a path alternates collection/document, so the even segments of a root
// path, or of a suffix appended to a document path, are collections).
func adapterCollections(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := repoRoot(t)
	segment := regexp.MustCompile(`^/?[a-z_]+(/[a-z_]+)*/?$`)
	for _, pkg := range []string{"ledger", "stream"} {
		dir := filepath.Join(root, "internal", pkg)
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatalf("parse internal/%s: %v", pkg, err)
		}
		for _, p := range pkgs {
			for fname, f := range p.Files {
				where := "internal/" + pkg + "/" + filepath.Base(fname)
				ast.Inspect(f, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.ValueSpec:
						for i, id := range n.Names {
							if i >= len(n.Values) {
								continue
							}
							s, ok := stringLit(n.Values[i])
							switch {
							case !ok:
							case strings.HasSuffix(id.Name, "Collection"):
								out[s] = where
							case strings.Contains(s, "/") && segment.MatchString(s):
								addPath(out, s, where)
							}
						}
					case *ast.BinaryExpr:
						if n.Op != token.ADD {
							return true
						}
						for _, e := range []ast.Expr{n.X, n.Y} {
							s, ok := stringLit(e)
							if ok && strings.Contains(s, "/") && segment.MatchString(s) {
								addPath(out, s, where)
							}
						}
					}
					return true
				})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Firestore collection found in internal/ledger or internal/stream")
	}
	return out
}

// addPath records the collection segments of a path literal.
func addPath(out map[string]string, path, where string) {
	for i, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if i%2 == 0 {
			out[seg] = where
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
