package deploy

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// The evaluator lives in test/tfconfig. These are the test helpers of this
// package over it: a failure to parse or evaluate fails the test.

// repoRoot is the repository root, independent of the working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := tfconfig.RepoDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// resource is one resource block of the configuration.
type resource tfconfig.Resource

func (r resource) addr() string { return tfconfig.Resource(r).Addr() }

// tfConfig is the root module of terraform/, parsed but not planned.
type tfConfig struct {
	Dir       string
	Files     map[string]*hcl.File
	Resources []resource
	Variables map[string]*hclsyntax.Block

	tf *tfconfig.Config
}

func loadTerraform(t testing.TB) *tfConfig {
	t.Helper()
	tf, err := tfconfig.Load(filepath.Join(repoRoot(t), "terraform"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tfConfig{Dir: tf.Dir, Files: tf.Files, Variables: tf.Variables, tf: tf}
	for _, r := range tf.Resources {
		cfg.Resources = append(cfg.Resources, resource(r))
	}
	return cfg
}

// ofType returns the resources of one type.
func (c *tfConfig) ofType(typ string) []resource {
	var out []resource
	for _, r := range c.tf.OfType(typ) {
		out = append(out, resource(r))
	}
	return out
}

// lookup returns the resource named by "type.name".
func (c *tfConfig) lookup(t testing.TB, addr string) resource {
	t.Helper()
	r, err := c.tf.Lookup(addr)
	if err != nil {
		t.Fatal(err)
	}
	return resource(r)
}

// attr returns the attribute at a path of nested blocks and a final
// attribute name, e.g. attr(b, "push_config", "oidc_token", "audience").
func attr(b *hclsyntax.Block, path ...string) (*hclsyntax.Attribute, bool) {
	return tfconfig.Attr(b, path...)
}

// nested returns the block at a path of block types, or nil.
func nested(b *hclsyntax.Block, path ...string) *hclsyntax.Block { return tfconfig.Nested(b, path...) }

// traversal renders a plain reference canonically, or "".
func traversal(expr hcl.Expression) string { return tfconfig.Traversal(expr) }

// evaluator evaluates what a plan knows offline (see tfconfig.Evaluator).
// cfg, vars and ctx are the shared evaluator's own: a change to
// ctx.Variables is seen by both.
type evaluator struct {
	cfg  *tfConfig
	vars map[string]cty.Value
	ctx  *hcl.EvalContext

	tf *tfconfig.Evaluator
}

func wrap(cfg *tfConfig, ev *tfconfig.Evaluator) *evaluator {
	return &evaluator{cfg: cfg, vars: ev.Vars, ctx: ev.Ctx, tf: ev}
}

func newEvaluator(t testing.TB, cfg *tfConfig, overrides map[string]cty.Value) *evaluator {
	t.Helper()
	ev, err := tfconfig.NewEvaluator(cfg.tf, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return wrap(cfg, ev)
}

// eval evaluates expr; with each set, as inside a for_each resource.
func (ev *evaluator) eval(t testing.TB, expr hcl.Expression, each *[2]cty.Value) cty.Value {
	t.Helper()
	v, err := ev.tf.Eval(expr, each)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// forEach evaluates a resource's for_each into key -> each.value.
func (ev *evaluator) forEach(t testing.TB, r resource) map[string]cty.Value {
	t.Helper()
	m, err := ev.tf.ForEach(tfconfig.Resource(r))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// str evaluates a known string.
func (ev *evaluator) str(t testing.TB, expr hcl.Expression, each *[2]cty.Value) string {
	t.Helper()
	s, err := ev.tf.Str(expr, each)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withConfigured returns an evaluator in which resources of the given types
// have the attributes their configuration sets (see tfconfig.WithConfigured).
func (ev *evaluator) withConfigured(t testing.TB, types ...string) *evaluator {
	t.Helper()
	child, err := ev.tf.WithConfigured(types...)
	if err != nil {
		t.Fatal(err)
	}
	return wrap(ev.cfg, child)
}

// tfvars reads a .tfvars file of constants.
func tfvars(t testing.TB, path string) map[string]cty.Value {
	t.Helper()
	vars, err := tfconfig.ReadTFVars(path)
	if err != nil {
		t.Fatal(err)
	}
	return vars
}

// deployed returns an evaluator for a configuration with an image, i.e. with
// the services, triggers, push subscription and scheduler job present.
func deployed(t testing.TB, cfg *tfConfig, extra map[string]cty.Value) *evaluator {
	t.Helper()
	ev, err := tfconfig.Deployed(cfg.tf, extra)
	if err != nil {
		t.Fatal(err)
	}
	return wrap(cfg, ev)
}

func keysOf[V any](m map[string]V) []string { return tfconfig.KeysOf(m) }
