package deploy

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exitCode is a finished run's exit status (0 when it succeeded).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("deploy.sh did not run: %v", err)
	return -1
}

// Nothing is deployed by accident: without a project, an environment and a
// step named, or with a target that contradicts production's variables,
// deploy.sh prints its usage and exits 2 before calling any tool. Asked for
// help, it prints its header (the steps, the usage line and the
// environment, not its code) and exits 0, without calling a tool either.
func TestDeployScriptNeedsATarget(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		files []string // written into the checkout's terraform/
		want  string   // in the output, besides the usage
		help  bool
	}{
		{name: "--help", args: []string{"--help"}, help: true},
		{name: "-h", args: []string{"-h"}, help: true},
		{name: "help", args: []string{"help"}, help: true},
		{name: "no arguments", want: "no project"},
		{name: "a step alone", args: []string{"infra"}, want: "no project"},
		{name: "a project without environment", args: []string{"--project", "alpipe-dev-1", "infra"}, want: "no environment"},
		{name: "PROJECT_ID without environment", env: map[string]string{"PROJECT_ID": "alpipe-dev-1"}, args: []string{"infra"}, want: "no environment"},
		{name: "an environment without project", args: []string{"--env", "dev", "infra"}, want: "no project"},
		{name: "an unknown environment", args: []string{"--project", "alpipe-dev-1", "--env", "staging", "infra"}, want: "dev or prod"},
		{name: "a target without a step", args: []string{"--project", "alpipe-dev-1", "--env", "dev"}, want: "no step"},
		{name: "an unknown step", args: []string{"--project", "alpipe-dev-1", "--env", "dev", "everything"}, want: "unknown step everything"},
		{name: "an unknown option", args: []string{"--project", "alpipe-dev-1", "--env", "dev", "--force", "infra"}, want: "unknown option --force"},
		{name: "smoke against production", args: []string{"--project", "alpinashop-datos", "--env", "prod", "--yes", "smoke"}, want: "dev environment only"},
		{name: "production's project as dev", args: []string{"--project", "alpinashop-datos", "--env", "dev", "--yes", "infra"}, want: "env/prod.tfvars"},
		{name: "prod against another project", args: []string{"--project", "alpipe-dev-1", "--env", "prod", "--yes", "infra"}, want: "env/prod.tfvars"},
		{name: "a terraform.tfvars every environment would read", args: []string{"--project", "alpinashop-datos", "--env", "prod", "--yes", "infra"},
			files: []string{"terraform.tfvars"}, want: "terraform/terraform.tfvars would apply to every environment"},
		{name: "an auto.tfvars every environment would read", args: []string{"--project", "alpipe-dev-1", "--env", "dev", "--yes", "infra"},
			files: []string{"mine.auto.tfvars"}, want: "terraform/mine.auto.tfvars would apply to every environment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newDeployCheckout(t, false)
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(repo, "terraform", f), []byte("max_instances = { IngestCSV = 1 }\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run := runDeploy(t, repo, tc.env, tc.args...)
			code, wants := 2, []string{tc.want}
			if tc.help {
				code, wants = 0, []string{"bootstrap  enable", "smoke      dev only", "PROJECT_ID", "exits 2"}
				if strings.Contains(run.out, "set -euo") || strings.HasPrefix(run.out, "#") {
					t.Errorf("deploy.sh %s prints code or comment marks:\n%s", tc.name, run.out)
				}
			}
			if got := exitCode(t, run.err); got != code {
				t.Errorf("exit status %d, want %d\n%s", got, code, run.out)
			}
			if len(run.calls) != 0 {
				t.Errorf("tools were called:\n%s", strings.Join(run.calls, "\n"))
			}
			for _, want := range append(wants, "Usage: scripts/deploy.sh --project ID --env dev|prod") {
				if !strings.Contains(run.out, want) {
					t.Errorf("output lacks %q:\n%s", want, run.out)
				}
			}
		})
	}
}

// The smoke step runs against dev only (see TestDeployScriptNeedsATarget),
// writes only rows it can name (order SMOKE-<time>, SKU ALPIPE-SMOKE,
// country AQ, an object smoke-<time>.csv) and removes what BigQuery lets it
// remove: the order lines and the daily SKU rows by DELETE, both objects.
func TestSmokeWritesOnlyItsOwnRowsAndRemovesThem(t *testing.T) {
	repo := newDeployCheckout(t, false)
	run := runDeploy(t, repo, nil, "--project", "alpipe-dev-1", "--env", "dev", "smoke")
	if run.err != nil {
		t.Fatalf("deploy.sh smoke: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
	}

	// The CSV it uploads.
	b, err := os.ReadFile(run.log + ".csv")
	if err != nil {
		t.Fatalf("no CSV uploaded: %v", err)
	}
	records, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		// The second line is malformed on purpose (an unquoted decimal
		// comma): read it field by field instead.
		records = nil
		for _, l := range strings.Split(strings.TrimSpace(strings.ReplaceAll(string(b), "\r", "")), "\n") {
			records = append(records, strings.Split(l, ","))
		}
	}
	if len(records) < 2 {
		t.Fatalf("CSV %q: want a header and rows", b)
	}
	smokeID := ""
	for _, r := range records[1:] {
		id, sku, pais := r[0], r[3], r[len(r)-1]
		if !strings.HasPrefix(id, "SMOKE-") || sku != "ALPIPE-SMOKE" || pais != "AQ" {
			t.Errorf("CSV row %q: want pedido_id SMOKE-*, sku ALPIPE-SMOKE, pais AQ", r)
		}
		smokeID = id
	}

	// The order it publishes.
	pub := run.matching(`^gcloud pubsub topics publish `)
	if len(pub) != 1 {
		t.Fatalf("publishes %d orders, want 1:\n%s", len(pub), strings.Join(run.calls, "\n"))
	}
	m := regexp.MustCompile(`--message=(\{.*\}) `).FindStringSubmatch(pub[0])
	if m == nil {
		t.Fatalf("no --message in %s", pub[0])
	}
	var order struct {
		PedidoID string `json:"pedido_id"`
		Pais     string `json:"pais"`
		Lineas   []struct {
			SKU string `json:"sku"`
		} `json:"lineas"`
	}
	if err := json.Unmarshal([]byte(m[1]), &order); err != nil {
		t.Fatalf("order %s: %v", m[1], err)
	}
	if order.PedidoID != smokeID || order.Pais != "AQ" || len(order.Lineas) == 0 {
		t.Errorf("order %s: want pedido_id %s, pais AQ and lines", m[1], smokeID)
	}
	for _, l := range order.Lineas {
		if l.SKU != "ALPIPE-SMOKE" {
			t.Errorf("order line SKU %q, want ALPIPE-SMOKE", l.SKU)
		}
	}

	// What it writes with SQL: only DELETEs of its own rows.
	var deletes []string
	for _, q := range run.matching(`^bq query `) {
		switch {
		case regexp.MustCompile(`(?i)\b(insert|update|merge|truncate|drop)\b`).MatchString(q):
			t.Errorf("the smoke step changes tables beyond its own rows: %s", q)
		case regexp.MustCompile(`(?i)\bdelete\b`).MatchString(q):
			deletes = append(deletes, regexp.MustCompile(`^bq query .*?(DELETE)`).ReplaceAllString(q, "$1"))
		}
	}
	wantDeletes := []string{
		"DELETE FROM `alpipe-dev-1.alpinashop_analitica.lineas_pedido` WHERE pedido_id = '" + smokeID + "'",
		"DELETE FROM `alpipe-dev-1.alpinashop_analitica.ventas_diarias_sku` WHERE sku = 'ALPIPE-SMOKE'",
	}
	if diff := cmp.Diff(wantDeletes, deletes); diff != "" {
		t.Errorf("DELETE statements (-want +got):\n%s", diff)
	}
	stamp := strings.TrimPrefix(smokeID, "SMOKE-")
	removed := run.matching(`^gcloud storage rm `)
	for _, want := range []string{"gs://b-landing/exportaciones/", "gs://b-quarantine/cuarentena/"} {
		found := false
		for _, c := range removed {
			found = found || (strings.Contains(c, want) && strings.Contains(c, "smoke-"+stamp))
		}
		if !found {
			t.Errorf("no removal of its object under %s:\n%s", want, strings.Join(removed, "\n"))
		}
	}
}
