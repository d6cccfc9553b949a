package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The variable validations run in Terraform itself, which needs no provider
// to check them: a module of variables.tf alone is planned with the
// defaults (which must pass: a regex Terraform's RE2 refuses fails every
// plan), with the deployment's tfvars, and with values that must be refused.
func TestVariableValidationsWithTerraform(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform not installed: variable validations not run (the pipeline's terraform validate covers the syntax)")
	}
	cfg := loadTerraform(t)
	dir := t.TempDir()
	vars, err := os.ReadFile(filepath.Join(cfg.Dir, "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"variables.tf": string(vars),
		// Every variable is read, so that each is evaluated.
		"main.tf": "output \"vars\" {\n  value = [" + strings.Join(prefixed(keysOf(cfg.Variables), "var."), ", ") + "]\n}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	terraform := func(args ...string) (string, error) {
		cmd := exec.Command(tf, append([]string{"-chdir=" + dir}, args...)...)
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+os.DevNull, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := terraform("init", "-backend=false", "-input=false", "-no-color"); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	deployedVars := filepath.Join(cfg.Dir, "testdata", "deployed.tfvars")

	tests := []struct {
		name    string
		args    []string
		refused string // the variable named in the error; "" = the plan passes
	}{
		{name: "defaults", args: []string{"-var", "project_id=alpinashop-datos"}},
		{name: "deployment", args: []string{"-var-file", deployedVars}},
		{name: "largest accepted settings", args: []string{"-var", "project_id=alpinashop-datos",
			"-var", `stream={batch_wait="1000ms", batch_max_orders=250, max_clock_skew="1h"}`,
			"-var", `sweep={window="96h", grace="1h", max_objects=1000, concurrency=4}`,
			"-var", `landing_prefixes=["exportaciones/", "otros/sub/"]`}},
		{name: "no batching", args: []string{"-var", "project_id=alpinashop-datos", "-var", `stream={batch_wait="0s"}`}},
		{name: "the application's Firestore database", args: []string{"-var", "project_id=alpinashop-datos", "-var", "firestore_database=(default)"}, refused: "firestore_database"},
		{name: "batch wait over a second", args: []string{"-var", "project_id=alpinashop-datos", "-var", `stream={batch_wait="2s"}`}, refused: "stream"},
		{name: "batch wait not a duration", args: []string{"-var", "project_id=alpinashop-datos", "-var", `stream={batch_wait="soon"}`}, refused: "stream"},
		{name: "batch over a transaction", args: []string{"-var", "project_id=alpinashop-datos", "-var", `stream={batch_max_orders=300}`}, refused: "stream"},
		{name: "clock skew under a minute", args: []string{"-var", "project_id=alpinashop-datos", "-var", `stream={max_clock_skew="30s"}`}, refused: "stream"},
		{name: "sweep grace shorter than an ingest", args: []string{"-var", "project_id=alpinashop-datos", "-var", `sweep={grace="5m"}`}, refused: "sweep"},
		{name: "sweep window within Eventarc's retries", args: []string{"-var", "project_id=alpinashop-datos", "-var", `sweep={window="24h"}`}, refused: "sweep"},
		{name: "sweep concurrency", args: []string{"-var", "project_id=alpinashop-datos", "-var", `sweep={concurrency=8}`}, refused: "sweep"},
		{name: "landing prefix without slash", args: []string{"-var", "project_id=alpinashop-datos", "-var", `landing_prefixes=["exportaciones"]`}, refused: "landing_prefixes"},
		{name: "TTL on a collection alpipe does not write", args: []string{"-var", "project_id=alpinashop-datos", "-var", `firestore_ttl_collection_groups=["nope"]`}, refused: "firestore_ttl_collection_groups"},
		{name: "sweep schedule", args: []string{"-var", "project_id=alpinashop-datos", "-var", "sweep_schedule=*/15 * * *"}, refused: "sweep_schedule"},
		{name: "image by tag", args: []string{"-var", "project_id=alpinashop-datos", "-var", "image=europe-west1-docker.pkg.dev/p/alpipe/server:latest"}, refused: "image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // plans only read the module
			out, err := terraform(append([]string{"plan", "-input=false", "-no-color", "-lock=false"}, tc.args...)...)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("plan refused: %v\n%s", err, out)
			case tc.refused != "" && err == nil:
				t.Errorf("plan passed, want var.%s refused\n%s", tc.refused, out)
			case tc.refused != "" && !strings.Contains(out, `variable "`+tc.refused+`"`):
				t.Errorf("plan refused, but not for var.%s:\n%s", tc.refused, out)
			}
		})
	}
}

func prefixed(names []string, prefix string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
