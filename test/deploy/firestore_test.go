package deploy

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every document keeps its payload in the string field json, which nothing
// queries: its single-field indexes are disabled (terraform test checks the
// empty index_config) in every collection group the adapters write
// (internal/docstore/firestore asks for it), which only their Go source says.
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

// The stream's tick lists a generation's dedup records with ListTag, an
// equality query on the field tag that only its automatic single-field
// index serves: no field resource may exempt it, in any collection group,
// or every fold fails with FAILED_PRECONDITION.
func TestTagFieldStaysIndexed(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)
	fields := cfg.ofType("google_firestore_field")
	if len(fields) == 0 {
		t.Fatal("no google_firestore_field resource found: the test reads the wrong configuration")
	}
	for _, r := range fields {
		if f := ev.str(t, r.Block.Body.Attributes["field"].Expr, nil); f == "tag" {
			t.Errorf("a google_firestore_field configures the field tag: ListTag needs its automatic single-field index")
		}
	}
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
		files, err := parseGoFiles(dir)
		if err != nil {
			t.Fatalf("parse internal/%s: %v", pkg, err)
		}

		for fname, f := range files {
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
						if e == n.Y && replacesLastID(n.X) {
							// strings.TrimSuffix(doc, "/<id>") + "/<other id>":
							// a sibling document, not a collection under one.
							continue
						}
						if ok && strings.Contains(s, "/") && segment.MatchString(s) {
							addPath(out, s, where)
						}
					}
				}
				return true
			})
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

// replacesLastID reports whether e is strings.TrimSuffix(path, "/<id>")
// with a one-segment suffix: what is appended to it names a document of
// the same collection (the stream's fold document, next to its watermark).
func replacesLastID(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "TrimSuffix" {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "strings" {
		return false
	}
	suffix, ok := stringLit(call.Args[1])
	return ok && strings.HasPrefix(suffix, "/") && !strings.Contains(suffix[1:], "/")
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
