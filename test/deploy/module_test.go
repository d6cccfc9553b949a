package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// repoRoot is the repository root, independent of the working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := tfconfig.RepoDir()
	check(t, err)
	return dir
}

func readRepoFile(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	check(t, err)
	return string(b)
}

func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// moduleData is terraform/module.json: what the module plans that Go code
// and the scripts must agree with, held equal to the plan by
// terraform/tests/deployment.tftest.hcl.
type moduleData struct {
	APIs                         []string               `json:"apis"`
	ArtifactRepository           string                 `json:"artifact_repository"`
	Region                       string                 `json:"region"`
	DeployerAccountID            string                 `json:"deployer_account_id"`
	RejectCodes                  []string               `json:"reject_codes"`
	FirestoreCollectionGroups    []string               `json:"firestore_collection_groups"`
	FirestoreTTLCollectionGroups []string               `json:"firestore_ttl_collection_groups"`
	Tables                       map[string]moduleTable `json:"tables"`
	Views                        map[string]struct {
		Key          string            `json:"key"`
		Accumulation string            `json:"accumulation"`
		SQL          map[string]string `json:"sql"` // by accumulation mode
	} `json:"views"`
}

type moduleTable struct {
	Partition  string            `json:"partition"`
	Clustering []string          `json:"clustering"`
	Schema     []warehouse.Field `json:"schema"`
}

func readModuleData(t testing.TB) moduleData {
	t.Helper()
	var d moduleData
	if err := json.Unmarshal([]byte(readRepoFile(t, "terraform/module.json")), &d); err != nil {
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
		check(t, err)
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

// check fails the test on err.
func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
