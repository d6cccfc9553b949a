package tfconfig

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// The evaluator refuses what Terraform would refuse of a variable, rather
// than evaluating a configuration no plan could have.
func TestEvaluatorReportsErrors(t *testing.T) {
	dir, err := ModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		vars map[string]cty.Value
	}{
		{"undeclared variable", map[string]cty.Value{"nope": cty.StringVal("x")}},
		{"value of the wrong type", map[string]cty.Value{"project_id": cty.ListValEmpty(cty.String)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewEvaluator(cfg, tt.vars); err == nil {
				t.Error("got no error")
			}
		})
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of a folder without .tf files: got no error")
	}
}
