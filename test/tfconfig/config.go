// Package tfconfig reads the Terraform configuration (terraform/) without a
// provider or a cloud account, for what Terraform itself cannot give.
//
// The deployment the stack (test/stack) replays is data: TopologyFile and
// ServicesFile, which Terraform's own test holds equal to the plan, read
// with encoding/json (Open). The checks of test/deploy compare the module's
// text with the Go code: for them Load parses the root module and the
// Evaluator evaluates what a plan knows before apply (variables, locals,
// configured attributes) with the HCL and cty libraries Terraform is built
// on. Every policy Terraform can check runs in terraform test.
package tfconfig

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// RepoDir is the repository root, found from this source file's location:
// the callers are tests and test harnesses that run from the checkout, in
// whatever working directory `go test` gives them.
func RepoDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the tfconfig source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
}

// ModuleDir is the root module, terraform/ of the repository.
func ModuleDir() (string, error) {
	root, err := RepoDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "terraform"), nil
}

// Resource is one resource block of the configuration.
type Resource struct {
	Type, Name string
	File       string
	Block      *hclsyntax.Block
}

// Addr is the resource's address, "type.name".
func (r Resource) Addr() string { return r.Type + "." + r.Name }

// Config is the root module, parsed but not planned.
type Config struct {
	Dir       string
	Files     map[string]*hcl.File
	Resources []Resource
	Variables map[string]*hclsyntax.Block
	Locals    map[string]*hclsyntax.Attribute
}

// Load parses every *.tf file of the module in dir.
func Load(dir string) (*Config, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no %s/*.tf files found (err=%v)", dir, err)
	}
	sort.Strings(paths)
	cfg := &Config{
		Dir:       dir,
		Files:     map[string]*hcl.File{},
		Variables: map[string]*hclsyntax.Block{},
		Locals:    map[string]*hclsyntax.Attribute{},
	}
	parser := hclparse.NewParser()
	for _, p := range paths {
		f, diags := parser.ParseHCLFile(p)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", p, diags.Error())
		}
		name := filepath.Base(p)
		cfg.Files[name] = f
		body := f.Body.(*hclsyntax.Body)
		for _, b := range body.Blocks {
			switch b.Type {
			case "resource":
				cfg.Resources = append(cfg.Resources, Resource{Type: b.Labels[0], Name: b.Labels[1], File: name, Block: b})
			case "variable":
				cfg.Variables[b.Labels[0]] = b
			case "locals":
				for n, a := range b.Body.Attributes {
					if _, dup := cfg.Locals[n]; dup {
						return nil, fmt.Errorf("local %s declared twice", n)
					}
					cfg.Locals[n] = a
				}
			}
		}
	}
	return cfg, nil
}

// OfType returns the resources of one type.
func (c *Config) OfType(typ string) []Resource {
	var out []Resource
	for _, r := range c.Resources {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// Lookup returns the resource named by "type.name".
func (c *Config) Lookup(addr string) (Resource, error) {
	for _, r := range c.Resources {
		if r.Addr() == addr {
			return r, nil
		}
	}
	return Resource{}, fmt.Errorf("resource %s not found", addr)
}

// Attr returns the attribute at a path of nested blocks and a final
// attribute name, e.g. Attr(b, "push_config", "oidc_token", "audience").
func Attr(b *hclsyntax.Block, path ...string) (*hclsyntax.Attribute, bool) {
	body := b.Body
	for _, name := range path[:len(path)-1] {
		next := Block(body, name)
		if next == nil {
			return nil, false
		}
		body = next.Body
	}
	a, ok := body.Attributes[path[len(path)-1]]
	return a, ok
}

// Block returns the first nested block of that type (static or dynamic
// blocks are distinguished by the caller), or nil.
func Block(body *hclsyntax.Body, typ string) *hclsyntax.Block {
	for _, b := range body.Blocks {
		if b.Type == typ {
			return b
		}
	}
	return nil
}

// Nested returns the block at a path of block types, or nil.
func Nested(b *hclsyntax.Block, path ...string) *hclsyntax.Block {
	for _, name := range path {
		if b = Block(b.Body, name); b == nil {
			return nil
		}
	}
	return b
}

// Traversal renders an expression that is a plain reference (e.g.
// google_service_account.invoker[each.key].email) in a canonical form, or
// "" for any other kind of expression.
func Traversal(expr hcl.Expression) string {
	trav, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() {
		// Index with a variable key (x[each.key]) is not a static traversal:
		// render it from the syntax tree instead.
		return renderRef(expr)
	}
	return renderTraversal(trav)
}

// renderTraversal renders a static traversal as Traversal does.
func renderTraversal(trav hcl.Traversal) string {
	var sb strings.Builder
	for _, step := range trav {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			sb.WriteString(s.Name)
		case hcl.TraverseAttr:
			sb.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				fmt.Fprintf(&sb, "[%q]", s.Key.AsString())
			} else {
				fmt.Fprintf(&sb, "[%s]", s.Key.AsBigFloat().String())
			}
		default:
			sb.WriteString("?")
		}
	}
	return sb.String()
}

// renderRef renders a reference with variable index keys from the syntax
// tree, or "" when expr is not a reference.
func renderRef(expr hcl.Expression) string {
	switch e := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		return renderTraversal(e.Traversal)
	case *hclsyntax.RelativeTraversalExpr:
		src := renderRef(e.Source)
		if src == "" {
			return ""
		}
		rel := renderTraversal(append(hcl.Traversal{hcl.TraverseRoot{Name: ""}}, e.Traversal...))
		return src + rel
	case *hclsyntax.IndexExpr:
		coll, key := renderRef(e.Collection), renderRef(e.Key)
		if coll == "" || key == "" {
			return ""
		}
		return coll + "[" + key + "]"
	}
	return ""
}

// KeysOf returns a map's keys, sorted.
func KeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
