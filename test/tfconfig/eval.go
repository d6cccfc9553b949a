package tfconfig

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

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

// Evaluator evaluates expressions the way Terraform would for the values
// that do not depend on the provider: variables (defaults, type defaults and
// overrides), locals, path.module and a handful of built-in functions.
// Resource and data attributes are unknown, until WithConfigured gives them
// the values a plan knows.
type Evaluator struct {
	Cfg  *Config
	Vars map[string]cty.Value
	Ctx  *hcl.EvalContext
}

// NewEvaluator evaluates the variables (overrides on top of their defaults)
// and the locals of cfg.
func NewEvaluator(cfg *Config, overrides map[string]cty.Value) (*Evaluator, error) {
	ev := &Evaluator{Cfg: cfg, Vars: map[string]cty.Value{}}
	for name, b := range cfg.Variables {
		ty, defaults := cty.DynamicPseudoType, (*typeexpr.Defaults)(nil)
		if a, ok := b.Body.Attributes["type"]; ok {
			var diags hcl.Diagnostics
			ty, defaults, diags = typeexpr.TypeConstraintWithDefaults(a.Expr)
			if diags.HasErrors() {
				return nil, fmt.Errorf("variable %s: type: %s", name, diags.Error())
			}
		}
		val := cty.NullVal(ty)
		if a, ok := b.Body.Attributes["default"]; ok {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, fmt.Errorf("variable %s: default must be a constant: %s", name, diags.Error())
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
			return nil, fmt.Errorf("variable %s: value does not match its type: %v", name, err)
		}
		ev.Vars[name] = conv
	}
	for name := range overrides {
		if _, ok := cfg.Variables[name]; !ok {
			return nil, fmt.Errorf("override of undeclared variable %s", name)
		}
	}

	vars := map[string]cty.Value{
		"var":  cty.ObjectVal(ev.Vars),
		"path": cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(cfg.Dir), "root": cty.StringVal(cfg.Dir)}),
		"data": cty.DynamicVal,
	}
	for _, r := range cfg.Resources {
		vars[r.Type] = cty.DynamicVal
	}
	ev.Ctx = &hcl.EvalContext{Variables: vars, Functions: functions(cfg.Dir)}
	ev.settleLocals()
	return ev, nil
}

// settleLocals evaluates the locals in ev.Ctx. Locals may refer to each
// other: all of them are re-evaluated in passes, each pass seeing the
// previous one's values, until nothing changes (a dependency chain of n
// locals settles in at most n passes). What fails to evaluate stays unknown.
func (ev *Evaluator) settleLocals() {
	cfg := ev.Cfg
	locals := map[string]cty.Value{}
	for pass := 0; pass <= len(cfg.Locals)+1; pass++ {
		ev.Ctx.Variables["local"] = localsVal(cfg, locals)
		next := map[string]cty.Value{}
		for name, a := range cfg.Locals {
			if v, diags := a.Expr.Value(ev.Ctx); !diags.HasErrors() {
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
	ev.Ctx.Variables["local"] = localsVal(cfg, locals)
}

func localsVal(cfg *Config, known map[string]cty.Value) cty.Value {
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

// Each is each.key and each.value inside a for_each resource.
type Each = [2]cty.Value

func (ev *Evaluator) child(each *Each) *hcl.EvalContext {
	if each == nil {
		return ev.Ctx
	}
	ctx := ev.Ctx.NewChild()
	ctx.Variables = map[string]cty.Value{
		"each": cty.ObjectVal(map[string]cty.Value{"key": each[0], "value": each[1]}),
	}
	return ctx
}

// Eval evaluates expr; with each set, as inside a for_each resource.
func (ev *Evaluator) Eval(expr hcl.Expression, each *Each) (cty.Value, error) {
	v, diags := expr.Value(ev.child(each))
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%s: %s", expr.Range(), diags.Error())
	}
	return v, nil
}

// ForEach evaluates a resource's for_each into key -> each.value.
func (ev *Evaluator) ForEach(r Resource) (map[string]cty.Value, error) {
	a, ok := r.Block.Body.Attributes["for_each"]
	if !ok {
		return nil, fmt.Errorf("%s has no for_each", r.Addr())
	}
	v, err := ev.Eval(a.Expr, nil)
	if err != nil {
		return nil, err
	}
	return collection(r.Addr(), v)
}

func collection(what string, v cty.Value) (map[string]cty.Value, error) {
	if !v.IsKnown() {
		return nil, fmt.Errorf("%s: for_each is unknown offline", what)
	}
	out := map[string]cty.Value{}
	if v.IsNull() {
		return out, nil
	}
	switch {
	case v.Type().IsSetType():
		for _, e := range v.AsValueSlice() {
			out[e.AsString()] = e
		}
	case v.Type().IsMapType() || v.Type().IsObjectType():
		for k, e := range v.AsValueMap() {
			out[k] = e
		}
	case v.Type().IsListType() || v.Type().IsTupleType():
		// A dynamic block's for_each may be a list: keys are the indexes.
		for i, e := range v.AsValueSlice() {
			out[fmt.Sprint(i)] = e
		}
	default:
		return nil, fmt.Errorf("%s: for_each of type %s", what, v.Type().FriendlyName())
	}
	return out, nil
}

// Str evaluates a known string (numbers and bools are converted).
func (ev *Evaluator) Str(expr hcl.Expression, each *Each) (string, error) {
	v, err := ev.Eval(expr, each)
	if err != nil {
		return "", err
	}
	if !v.IsKnown() || v.IsNull() {
		return "", fmt.Errorf("%s: value unknown or null offline", expr.Range())
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", fmt.Errorf("%s: not a string: %v", expr.Range(), err)
	}
	return s.AsString(), nil
}

// functions are the Terraform built-ins the configuration uses where it is
// evaluated offline; file and templatefile read relative to the module.
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
	// fileset lists the files under a folder (relative to the module) whose
	// names relative to it match a pattern; patterns with ** are not
	// needed by the module, so not supported.
	filesetFn := function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "pattern", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Set(cty.String)),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			base := args[0].AsString()
			if !filepath.IsAbs(base) {
				base = filepath.Join(dir, base)
			}
			matches, err := filepath.Glob(filepath.Join(base, args[1].AsString()))
			if err != nil {
				return cty.NilVal, err
			}
			if len(matches) == 0 {
				return cty.SetValEmpty(cty.String), nil
			}
			var out []cty.Value
			for _, m := range matches {
				rel, err := filepath.Rel(base, m)
				if err != nil {
					return cty.NilVal, err
				}
				out = append(out, cty.StringVal(filepath.ToSlash(rel)))
			}
			return cty.SetVal(out), nil
		},
	})
	// lookup(map or object, key, default), as Terraform's.
	lookupFn := function.New(&function.Spec{
		Params: []function.Parameter{{Name: "inputMap", Type: cty.DynamicPseudoType}, {Name: "key", Type: cty.String}, {Name: "default", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			m, key := args[0], args[1].AsString()
			ty := m.Type()
			switch {
			case ty.IsObjectType() && ty.HasAttribute(key):
				return m.GetAttr(key), nil
			case ty.IsMapType() && m.HasIndex(cty.StringVal(key)).True():
				return m.Index(cty.StringVal(key)), nil
			}
			return args[2], nil
		},
	})
	// coalesce skips empty strings as well as nulls, as Terraform's does
	// (cty's skips only nulls): a variable's "" means "not set".
	coalesceFn := function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "vals", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true},
		Type:     function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for _, v := range args {
				if !v.IsKnown() {
					return cty.DynamicVal, nil
				}
				if v.IsNull() || (v.Type() == cty.String && v.AsString() == "") {
					continue
				}
				return v, nil
			}
			return cty.NilVal, fmt.Errorf("no non-null, non-empty-string arguments")
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
		"coalesce":   coalesceFn,
		"contains":   stdlib.ContainsFunc,
		"distinct":   stdlib.DistinctFunc,
		"file":       fileFn,
		"fileset":    filesetFn,
		"flatten":    stdlib.FlattenFunc,
		"format":     stdlib.FormatFunc,
		"join":       stdlib.JoinFunc,
		"jsondecode": stdlib.JSONDecodeFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"keys":       stdlib.KeysFunc,
		"length":     stdlib.LengthFunc,
		"lookup":     lookupFn,
		"lower":      stdlib.LowerFunc,
		"merge":      stdlib.MergeFunc,
		"regex":      stdlib.RegexFunc,
		"regexall":   stdlib.RegexAllFunc,
		"replace":    stdlib.ReplaceFunc,
		"split":      stdlib.SplitFunc,
		"tonumber":   stdlib.MakeToFunc(cty.Number),
		"toset":      stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":   stdlib.MakeToFunc(cty.String),
		"trimsuffix": stdlib.TrimSuffixFunc,
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

// WithConfigured returns an evaluator in which resources of the given types
// have the attributes their configuration sets (a plan knows these before
// apply), e.g. google_logging_metric.x.name. Types are resolved in order, so
// a later type may refer to an earlier one. Computed attributes stay absent.
func (ev *Evaluator) WithConfigured(types ...string) (*Evaluator, error) {
	child := ev.clone()
	for _, typ := range types {
		byName := map[string]cty.Value{}
		for _, r := range ev.Cfg.OfType(typ) {
			v, err := child.configuredAll(r)
			if err != nil {
				return nil, err
			}
			byName[r.Name] = v
		}
		child.Ctx.Variables[typ] = cty.ObjectVal(byName)
		child.settleLocals()
	}
	return child, nil
}

func (ev *Evaluator) clone() *Evaluator {
	child := &Evaluator{Cfg: ev.Cfg, Vars: ev.Vars, Ctx: &hcl.EvalContext{
		Variables: map[string]cty.Value{},
		Functions: ev.Ctx.Functions,
	}}
	for k, v := range ev.Ctx.Variables {
		child.Ctx.Variables[k] = v
	}
	return child
}

// configuredAll is a resource's configured value: an object of instances
// for a for_each resource, else the one instance.
func (ev *Evaluator) configuredAll(r Resource) (cty.Value, error) {
	if _, ok := r.Block.Body.Attributes["for_each"]; ok {
		inst := map[string]cty.Value{}
		keys, err := ev.ForEach(r)
		if err != nil {
			return cty.NilVal, err
		}
		for k, v := range keys {
			each := Each{cty.StringVal(k), v}
			inst[k] = cty.ObjectVal(ev.configuredAttrs(r, &each))
		}
		return cty.ObjectVal(inst), nil
	}
	return cty.ObjectVal(ev.configuredAttrs(r, nil)), nil
}

func (ev *Evaluator) configuredAttrs(r Resource, each *Each) map[string]cty.Value {
	ctx := ev.child(each)
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
	return attrs
}

// ReadTFVars reads a .tfvars file of constants.
func ReadTFVars(path string) (map[string]cty.Value, error) {
	f, diags := hclparse.NewParser().ParseHCLFile(path)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse %s: %s", path, diags.Error())
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", path, diags.Error())
	}
	out := map[string]cty.Value{}
	for name, a := range attrs {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %s: %s", path, name, diags.Error())
		}
		out[name] = v
	}
	return out, nil
}

// DeployedVarsFile holds the variables of a configuration with an image,
// relative to the module: the one the offline checks (scripts/tf-check.sh)
// plan with.
const DeployedVarsFile = "testdata/deployed.tfvars"

// Deployed returns an evaluator for the configuration as a deployment plans
// it, with an image: DeployedVarsFile when the module has one, then extra on
// top (which must then set image itself). The services and their triggers
// are declared with or without an image; the image only decides what a new
// service would run.
func Deployed(cfg *Config, extra map[string]cty.Value) (*Evaluator, error) {
	vars := map[string]cty.Value{}
	path := filepath.Join(cfg.Dir, DeployedVarsFile)
	if _, err := os.Stat(path); err == nil {
		if vars, err = ReadTFVars(path); err != nil {
			return nil, err
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	return NewEvaluator(cfg, vars)
}
