package deploy

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// repoRoot is the repository root, found from this file's location so that
// the tests do not depend on the working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// resource is one resource or data block of the configuration.
type resource struct {
	Type, Name string
	File       string
	Block      *hclsyntax.Block
}

func (r resource) addr() string { return r.Type + "." + r.Name }

// tfConfig is the root module of terraform/, parsed but not planned.
type tfConfig struct {
	Dir       string
	Files     map[string]*hcl.File
	Resources []resource
	Data      []resource
	Variables map[string]*hclsyntax.Block
	Locals    map[string]*hclsyntax.Attribute
}

func loadTerraform(t testing.TB) *tfConfig {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "terraform")
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no terraform/*.tf files found (err=%v)", err)
	}
	sort.Strings(paths)
	cfg := &tfConfig{
		Dir:       dir,
		Files:     map[string]*hcl.File{},
		Variables: map[string]*hclsyntax.Block{},
		Locals:    map[string]*hclsyntax.Attribute{},
	}
	parser := hclparse.NewParser()
	for _, p := range paths {
		f, diags := parser.ParseHCLFile(p)
		if diags.HasErrors() {
			t.Fatalf("parse %s: %s", p, diags.Error())
		}
		name := filepath.Base(p)
		cfg.Files[name] = f
		body := f.Body.(*hclsyntax.Body)
		for _, b := range body.Blocks {
			switch b.Type {
			case "resource":
				cfg.Resources = append(cfg.Resources, resource{Type: b.Labels[0], Name: b.Labels[1], File: name, Block: b})
			case "data":
				cfg.Data = append(cfg.Data, resource{Type: b.Labels[0], Name: b.Labels[1], File: name, Block: b})
			case "variable":
				cfg.Variables[b.Labels[0]] = b
			case "locals":
				for n, a := range b.Body.Attributes {
					if _, dup := cfg.Locals[n]; dup {
						t.Fatalf("local %s declared twice", n)
					}
					cfg.Locals[n] = a
				}
			}
		}
	}
	return cfg
}

// ofType returns the resources of one type.
func (c *tfConfig) ofType(typ string) []resource {
	var out []resource
	for _, r := range c.Resources {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// lookup returns the resource named by "type.name".
func (c *tfConfig) lookup(t testing.TB, addr string) resource {
	t.Helper()
	for _, r := range c.Resources {
		if r.addr() == addr {
			return r
		}
	}
	t.Fatalf("resource %s not found", addr)
	return resource{}
}

// attr returns the attribute at a path of nested blocks and a final
// attribute name, e.g. attr(b, "push_config", "oidc_token", "audience").
func attr(b *hclsyntax.Block, path ...string) (*hclsyntax.Attribute, bool) {
	body := b.Body
	for _, name := range path[:len(path)-1] {
		next := block(body, name)
		if next == nil {
			return nil, false
		}
		body = next.Body
	}
	a, ok := body.Attributes[path[len(path)-1]]
	return a, ok
}

// block returns the first nested block of that type (static or dynamic
// blocks are distinguished by the caller), or nil.
func block(body *hclsyntax.Body, typ string) *hclsyntax.Block {
	for _, b := range body.Blocks {
		if b.Type == typ {
			return b
		}
	}
	return nil
}

// nested returns the block at a path of block types, or nil.
func nested(b *hclsyntax.Block, path ...string) *hclsyntax.Block {
	for _, name := range path {
		if b = block(b.Body, name); b == nil {
			return nil
		}
	}
	return b
}

// traversal renders an expression that is a plain reference (e.g.
// google_service_account.invoker[each.key].email) in a canonical form, or
// "" for any other kind of expression.
func traversal(expr hcl.Expression) string {
	trav, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() {
		// Index with a variable key (x[each.key]) is not a static traversal:
		// render it from the syntax tree instead.
		return renderRef(expr)
	}
	return renderTraversal(trav)
}

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

// evaluator evaluates expressions the way Terraform would for the values
// that do not depend on the provider: variables (defaults, type defaults and
// overrides), locals, path.module and a handful of built-in functions.
// Resource and data attributes are unknown.
type evaluator struct {
	cfg  *tfConfig
	vars map[string]cty.Value
	ctx  *hcl.EvalContext
}

func newEvaluator(t testing.TB, cfg *tfConfig, overrides map[string]cty.Value) *evaluator {
	t.Helper()
	ev := &evaluator{cfg: cfg, vars: map[string]cty.Value{}}
	for name, b := range cfg.Variables {
		ty, defaults := cty.DynamicPseudoType, (*typeexpr.Defaults)(nil)
		if a, ok := b.Body.Attributes["type"]; ok {
			var diags hcl.Diagnostics
			ty, defaults, diags = typeexpr.TypeConstraintWithDefaults(a.Expr)
			if diags.HasErrors() {
				t.Fatalf("variable %s: type: %s", name, diags.Error())
			}
		}
		val := cty.NullVal(ty)
		if a, ok := b.Body.Attributes["default"]; ok {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				t.Fatalf("variable %s: default must be a constant: %s", name, diags.Error())
			}
			val = v
		}
		if o, ok := overrides[name]; ok {
			val = o
		}
		if !val.IsNull() && defaults != nil {
			val = defaults.Apply(val)
		}
		conv, err := convert.Convert(val, ty)
		if err != nil {
			t.Fatalf("variable %s: value does not match its type: %v", name, err)
		}
		ev.vars[name] = conv
	}
	for name := range overrides {
		if _, ok := cfg.Variables[name]; !ok {
			t.Fatalf("override of undeclared variable %s", name)
		}
	}

	unknownRoots := map[string]cty.Value{"data": cty.DynamicVal}
	for _, r := range cfg.Resources {
		unknownRoots[r.Type] = cty.DynamicVal
	}
	vars := map[string]cty.Value{
		"var":  cty.ObjectVal(ev.vars),
		"path": cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(cfg.Dir), "root": cty.StringVal(cfg.Dir)}),
	}
	for k, v := range unknownRoots {
		vars[k] = v
	}
	ev.ctx = &hcl.EvalContext{Variables: vars, Functions: functions(cfg.Dir)}

	ev.settleLocals()
	return ev
}

// settleLocals evaluates the locals in ev.ctx. Locals may refer to each
// other: all of them are re-evaluated in passes, each pass seeing the
// previous one's values, until nothing changes (a dependency chain of n
// locals settles in at most n passes). What fails to evaluate stays unknown.
func (ev *evaluator) settleLocals() {
	cfg := ev.cfg
	locals := map[string]cty.Value{}
	for pass := 0; pass <= len(cfg.Locals)+1; pass++ {
		ev.ctx.Variables["local"] = localsVal(cfg, locals)
		next := map[string]cty.Value{}
		for name, a := range cfg.Locals {
			if v, diags := a.Expr.Value(ev.ctx); !diags.HasErrors() {
				next[name] = v
			}
		}
		settled := len(next) == len(locals)
		for name, v := range next {
			if old, ok := locals[name]; !ok || !old.RawEquals(v) {
				settled = false
			}
		}
		locals = next
		if settled {
			break
		}
	}
	ev.ctx.Variables["local"] = localsVal(cfg, locals)
}

func localsVal(cfg *tfConfig, known map[string]cty.Value) cty.Value {
	all := map[string]cty.Value{}
	for name := range cfg.Locals {
		if v, ok := known[name]; ok {
			all[name] = v
		} else {
			all[name] = cty.DynamicVal
		}
	}
	return cty.ObjectVal(all)
}

// eval evaluates expr; with each set, as inside a for_each resource.
func (ev *evaluator) eval(t testing.TB, expr hcl.Expression, each *[2]cty.Value) cty.Value {
	t.Helper()
	ctx := ev.ctx
	if each != nil {
		ctx = ev.ctx.NewChild()
		ctx.Variables = map[string]cty.Value{
			"each": cty.ObjectVal(map[string]cty.Value{"key": each[0], "value": each[1]}),
		}
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", expr.Range(), diags.Error())
	}
	return v
}

// forEach evaluates a resource's for_each into key -> each.value.
func (ev *evaluator) forEach(t testing.TB, r resource) map[string]cty.Value {
	t.Helper()
	a, ok := r.Block.Body.Attributes["for_each"]
	if !ok {
		t.Fatalf("%s has no for_each", r.addr())
	}
	v := ev.eval(t, a.Expr, nil)
	if !v.IsKnown() {
		t.Fatalf("%s: for_each is unknown offline", r.addr())
	}
	out := map[string]cty.Value{}
	switch {
	case v.Type().IsSetType():
		for _, e := range v.AsValueSlice() {
			out[e.AsString()] = e
		}
	case v.Type().IsMapType() || v.Type().IsObjectType():
		for k, e := range v.AsValueMap() {
			out[k] = e
		}
	default:
		t.Fatalf("%s: for_each of type %s", r.addr(), v.Type().FriendlyName())
	}
	return out
}

// str evaluates a known string.
func (ev *evaluator) str(t testing.TB, expr hcl.Expression, each *[2]cty.Value) string {
	t.Helper()
	v := ev.eval(t, expr, each)
	if !v.IsKnown() || v.IsNull() {
		t.Fatalf("%s: value unknown or null offline", expr.Range())
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		t.Fatalf("%s: not a string: %v", expr.Range(), err)
	}
	return s.AsString()
}

// functions are the Terraform built-ins the configuration uses where the
// tests evaluate it; file and templatefile read relative to the module.
func functions(dir string) map[string]function.Function {
	readFile := func(p string) (string, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	fileFn := function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := readFile(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(s), nil
		},
	})
	fns := map[string]function.Function{
		"base64encode": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "s", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(args[0].AsString()))), nil
			},
		}),
		"can":        tryfunc.CanFunc,
		"contains":   stdlib.ContainsFunc,
		"distinct":   stdlib.DistinctFunc,
		"file":       fileFn,
		"flatten":    stdlib.FlattenFunc,
		"format":     stdlib.FormatFunc,
		"join":       stdlib.JoinFunc,
		"jsondecode": stdlib.JSONDecodeFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"keys":       stdlib.KeysFunc,
		"length":     stdlib.LengthFunc,
		"lower":      stdlib.LowerFunc,
		"merge":      stdlib.MergeFunc,
		"regex":      stdlib.RegexFunc,
		"regexall":   stdlib.RegexAllFunc,
		"replace":    stdlib.ReplaceFunc,
		"split":      stdlib.SplitFunc,
		"tonumber":   stdlib.MakeToFunc(cty.Number),
		"toset":      stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":   stdlib.MakeToFunc(cty.String),
		"try":        tryfunc.TryFunc,
		"upper":      stdlib.UpperFunc,
		"values":     stdlib.ValuesFunc,
	}
	fns["templatefile"] = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			src, err := readFile(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return renderTemplate(src, args[0].AsString(), args[1].AsValueMap(), fns)
		},
	})
	return fns
}

// renderTemplate renders a templatefile() template with vars.
func renderTemplate(src, name string, vars map[string]cty.Value, fns map[string]function.Function) (cty.Value, error) {
	expr, diags := hclsyntax.ParseTemplate([]byte(src), name, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	v, diags := expr.Value(&hcl.EvalContext{Variables: vars, Functions: fns})
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	return v, nil
}

// withConfigured returns an evaluator in which resources of the given types
// have the attributes their configuration sets (a plan knows these before
// apply), e.g. google_logging_metric.x.name. Types are resolved in order, so
// a later type may refer to an earlier one. Computed attributes stay absent.
func (ev *evaluator) withConfigured(t testing.TB, types ...string) *evaluator {
	t.Helper()
	child := &evaluator{cfg: ev.cfg, vars: ev.vars, ctx: &hcl.EvalContext{
		Variables: map[string]cty.Value{},
		Functions: ev.ctx.Functions,
	}}
	for k, v := range ev.ctx.Variables {
		child.ctx.Variables[k] = v
	}
	for _, typ := range types {
		byName := map[string]cty.Value{}
		for _, r := range ev.cfg.ofType(typ) {
			if _, ok := r.Block.Body.Attributes["for_each"]; ok {
				inst := map[string]cty.Value{}
				for k, v := range child.forEach(t, r) {
					each := [2]cty.Value{cty.StringVal(k), v}
					inst[k] = child.configured(r, &each)
				}
				byName[r.Name] = cty.ObjectVal(inst)
				continue
			}
			byName[r.Name] = child.configured(r, nil)
		}
		child.ctx.Variables[typ] = cty.ObjectVal(byName)
		child.settleLocals()
	}
	return child
}

func (ev *evaluator) configured(r resource, each *[2]cty.Value) cty.Value {
	ctx := ev.ctx
	if each != nil {
		ctx = ev.ctx.NewChild()
		ctx.Variables = map[string]cty.Value{
			"each": cty.ObjectVal(map[string]cty.Value{"key": each[0], "value": each[1]}),
		}
	}
	attrs := map[string]cty.Value{}
	for name, a := range r.Block.Body.Attributes {
		switch name {
		case "for_each", "count", "depends_on", "provider":
			continue
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			continue
		}
		attrs[name] = v
	}
	return cty.ObjectVal(attrs)
}

// tfvars reads a .tfvars file of constants.
func tfvars(t testing.TB, path string) map[string]cty.Value {
	t.Helper()
	f, diags := hclparse.NewParser().ParseHCLFile(path)
	if diags.HasErrors() {
		t.Fatalf("parse %s: %s", path, diags.Error())
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		t.Fatalf("%s: %s", path, diags.Error())
	}
	out := map[string]cty.Value{}
	for name, a := range attrs {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("%s: %s: %s", path, name, diags.Error())
		}
		out[name] = v
	}
	return out
}

// deployed returns an evaluator for a configuration with an image, i.e. with
// the services, triggers, push subscription and scheduler job present.
func deployed(t testing.TB, cfg *tfConfig, extra map[string]cty.Value) *evaluator {
	t.Helper()
	vars := tfvars(t, filepath.Join(cfg.Dir, "testdata", "deployed.tfvars"))
	for k, v := range extra {
		vars[k] = v
	}
	return newEvaluator(t, cfg, vars)
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
