package deploy

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// Every document keeps its payload in the string field json, which nothing
// queries: its single-field indexes are disabled in every group of
// var.firestore_collection_groups (terraform test checks the empty
// index_config and the groups), which must hold every collection group the
// adapters write (internal/docstore/firestore asks for it), which only
// their Go source says.
func TestPayloadFieldIsNotIndexed(t *testing.T) {
	d := readModuleData(t)
	written := adapterCollections(t)
	for _, c := range d.FirestoreTTLCollectionGroups {
		written[c] = "var.firestore_ttl_collection_groups"
	}
	var missing []string
	for c, where := range written {
		if !slices.Contains(d.FirestoreCollectionGroups, c) {
			missing = append(missing, c+" ("+where+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("collection groups the adapters write but var.firestore_collection_groups lacks, so their json stays indexed: %v", missing)
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
