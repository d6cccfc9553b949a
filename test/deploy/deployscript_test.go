package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stubTools are stand-ins for gcloud, terraform and bq: each appends its
// arguments to $STUB_LOG as one line "tool arg arg ..." and answers the few
// calls deploy.sh reads from. STUB_RUNNING: the image `gcloud run services
// list` reports (empty: no service); STUB_FAIL: a word that, when in the
// arguments, makes gcloud fail like an expired login.
const stubTools = `#!/usr/bin/env bash
set -eu
tool="$(basename "$0")"
printf '%s %s\n' "$tool" "$*" >>"$STUB_LOG"
if [[ -n "${STUB_FAIL:-}" && "$*" == *"$STUB_FAIL"* ]]; then
  echo "ERROR: (gcloud) There was a problem refreshing your current auth tokens" >&2
  exit 1
fi
case "$tool $*" in
  "terraform -chdir="*" output -json bucket_names") echo '{"build": "b-build", "landing": "b-landing", "quarantine": "b-quarantine", "staging": "b-staging"}' ;;
  "terraform -chdir="*" output -raw image_repository") printf 'europe-west1-docker.pkg.dev/p/alpipe' ;;
  "terraform -chdir="*" output -raw dataset") printf 'alpipe-dev-1:alpinashop_analitica' ;;
  "terraform -chdir="*" output -raw orders_topic") printf 'pedidos-nuevos' ;;
  "gcloud storage cp "*)
    # The uploaded file, and the object it became, for the listing below.
    cat "$3" >>"$STUB_LOG.csv"
    printf '%s\n' "$4" >>"$STUB_LOG.objects" ;;
  "gcloud storage ls "*)
    # Every uploaded object has a quarantine file of the same name.
    sed 's#^gs://[^/]*/#gs://b-quarantine/cuarentena/lineas_pedido/#' "$STUB_LOG.objects" ;;
  "bq query "*) printf 'f0_\n1\n' ;;
  "gcloud builds submit"*)
    # A build takes time: a tag computed again afterwards would differ.
    sleep 1.1
    tag="$(printf '%s' "$*" | sed -n 's/.*COMMIT_SHA=\([^,]*\),.*/\1/p')"
    printf '%s' "$tag" >"$STUB_LOG.pushed" ;;
  "gcloud artifacts docker images describe"*)
    # Only the pushed tag has a digest.
    pushed="$(cat "$STUB_LOG.pushed" 2>/dev/null)" || pushed=""
    if [[ -z "$pushed" || "$*" != *":$pushed "* ]]; then
      echo "ERROR: (gcloud.artifacts.docker.images.describe) Image not found" >&2
      exit 1
    fi
    echo "sha256:1111111111111111111111111111111111111111111111111111111111111111" ;;
  "gcloud run services list"*) [[ -z "${STUB_RUNNING:-}" ]] || echo "$STUB_RUNNING" ;;
esac
`

// deployRun is one run of a copy of scripts/deploy.sh with stubbed tools.
type deployRun struct {
	calls []string // "tool args", in order
	err   error
	out   string
	log   string // the stubs' log; its .csv holds what gcloud storage cp uploaded
}

func (r deployRun) matching(re string) []string {
	rx := regexp.MustCompile(re)
	return slices.DeleteFunc(slices.Clone(r.calls), func(c string) bool { return !rx.MatchString(c) })
}

// newDeployCheckout copies deploy.sh into a fresh git repository with one
// commit and, when dirty, an uncommitted change; it returns the repository.
func newDeployCheckout(t *testing.T, dirty bool) string {
	t.Helper()
	for _, tool := range []string{"bash", "git", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: deploy.sh behaviour not checked", tool)
		}
	}
	repo := t.TempDir()
	// Production's variables name production's project, which a dev run
	// must not target.
	for _, f := range []string{"scripts/deploy.sh", "terraform/env/prod.tfvars"} {
		check(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o755))
		check(t, os.WriteFile(filepath.Join(repo, f), []byte(readRepoFile(t, f)), 0o755))
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	if dirty {
		check(t, os.WriteFile(filepath.Join(repo, "terraform", "main.tf"), []byte("# edited\n"), 0o644))
	}
	return repo
}

// runDeploy runs deploy.sh with typed as its standard input.
func runDeploy(t *testing.T, repo string, env map[string]string, typed string, args ...string) deployRun {
	t.Helper()
	// Outside the checkout, so that the stubs do not make the tree dirty.
	bin := repo + "-stubs"
	check(t, os.MkdirAll(bin, 0o755))
	for _, tool := range []string{"gcloud", "terraform", "bq"} {
		check(t, os.WriteFile(filepath.Join(bin, tool), []byte(stubTools), 0o755))
	}
	log := filepath.Join(bin, "calls.log")
	for _, f := range []string{log, log + ".csv", log + ".objects"} {
		_ = os.Remove(f)
	}
	cmd := exec.Command(filepath.Join(repo, "scripts", "deploy.sh"), args...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STUB_LOG="+log,
		"IMAGE=", "IMAGE_TAG=", "STUB_RUNNING=", "STUB_FAIL=", "PROJECT_ID=", "REGION=", "TF_STATE_BUCKET=")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(typed)
	out, err := cmd.CombinedOutput()
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(b), repo, "REPO")), "\n")
	calls = slices.DeleteFunc(calls, func(l string) bool { return l == "" })
	return deployRun{calls: calls, err: err, out: string(out), log: log}
}

const (
	running = "europe-west1-docker.pkg.dev/p/alpipe/server@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	built   = "europe-west1-docker.pkg.dev/p/alpipe/server@sha256:1111111111111111111111111111111111111111111111111111111111111111"

	// A dev target applying without asking, and what it plans with.
	devVars  = "-var project_id=alpipe-dev-1 -var environment=dev -var region=europe-west1"
	devPlan  = "terraform -chdir=REPO/terraform plan -input=false -out=REPO/.cache/deploy/alpipe-dev-1.tfplan " + devVars
	devApply = "terraform -chdir=REPO/terraform apply -input=false REPO/.cache/deploy/alpipe-dev-1.tfplan"

	prodPlan  = "terraform -chdir=REPO/terraform plan -input=false -out=REPO/.cache/deploy/alpinashop-datos.tfplan -var-file=REPO/terraform/env/prod.tfvars -var project_id=alpinashop-datos -var environment=prod -var region=europe-west1 -var image=" + running
	prodApply = "terraform -chdir=REPO/terraform apply -input=false REPO/.cache/deploy/alpinashop-datos.tfplan"
)

var (
	dev  = []string{"--project", "alpipe-dev-1", "--env", "dev", "--yes"}
	prod = []string{"--project", "alpinashop-datos", "--env", "prod"}
)

func target(base []string, steps ...string) []string {
	return append(append([]string{}, base...), steps...)
}

func rolled(image string) []string {
	var out []string
	for _, s := range []string{"alpipe-ingest", "alpipe-orders", "alpipe-watermark", "alpipe-sweeper"} {
		out = append(out, "gcloud run services update "+s+" --project=alpipe-dev-1 --region=europe-west1 --image="+image+" --quiet")
	}
	return out
}

func TestDeployScriptBehaviour(t *testing.T) {
	deployed := map[string]string{"STUB_RUNNING": running}
	noPlan := map[string][]string{` (plan|apply) `: nil}
	prodPlanned := map[string][]string{` (plan|apply) `: {prodPlan}}
	prodApplied := map[string][]string{` (plan|apply) `: {prodPlan, prodApply}}
	prodInfra := [][]string{target(prod, "infra")}
	tests := []struct {
		name  string
		dirty bool
		env   map[string]string
		typed string     // the answer to the confirmation, if asked
		runs  [][]string // invocations, each a list of arguments, in order
		// want: per regexp over the calls of the last invocation, the calls
		// that match it, in order.
		want    map[string][]string
		wantErr bool
	}{
		{name: "infra on a deployed project passes the running image", env: deployed,
			runs: [][]string{target(dev, "infra")}, want: map[string][]string{` (plan|apply) `: {devPlan + " -var image=" + running, devApply}}},
		{name: "infra on a new project applies only what the build needs", runs: [][]string{target(dev, "infra")},
			want: map[string][]string{` (plan|apply) `: {devPlan + " " +
				"-target=google_project_service.api -target=google_artifact_registry_repository.images " +
				"-target=google_artifact_registry_repository_iam_member.deployer_writer -target=google_storage_bucket.bucket " +
				"-target=google_storage_bucket_iam_member.deployer_build_sources -target=google_project_iam_member.deployer_log_writer", devApply}}},
		{name: "a failing gcloud call stops infra before any plan", env: map[string]string{"STUB_RUNNING": running, "STUB_FAIL": "run services list"},
			runs: [][]string{target(dev, "infra")}, want: noPlan, wantErr: true},
		{name: "build and deploy of a modified tree in one run name one image", dirty: true, runs: [][]string{target(dev, "build", "deploy")},
			want: map[string][]string{
				` (plan|apply) `:      {devPlan + " -var image=" + built, devApply},
				`run services update`: rolled(built),
			}},
		{name: "deploy after a separate build run deploys what was built", dirty: true, runs: [][]string{target(dev, "build"), target(dev, "deploy")},
			want: map[string][]string{
				` (plan|apply) `:      {devPlan + " -var image=" + built, devApply},
				`artifacts|builds`:    nil, // no new lookup by a recomputed tag
				`run services update`: rolled(built),
			}},
		{name: "deploy to another project than the build's refuses", dirty: true,
			runs: [][]string{target(dev, "build"), {"--project", "alpipe-dev-2", "--env", "dev", "--yes", "deploy"}}, want: noPlan, wantErr: true},
		{name: "deploy with nothing built refuses", runs: [][]string{target(dev, "deploy")}, want: noPlan, wantErr: true},
		{name: "all is a first deployment, without smoke", runs: [][]string{target(dev, "all")},
			want: map[string][]string{
				`services enable|builds submit| apply |run services update|pubsub|bq `: append([]string{
					"gcloud services enable artifactregistry.googleapis.com bigquery.googleapis.com cloudbuild.googleapis.com cloudresourcemanager.googleapis.com cloudscheduler.googleapis.com eventarc.googleapis.com firestore.googleapis.com iam.googleapis.com iamcredentials.googleapis.com logging.googleapis.com monitoring.googleapis.com pubsub.googleapis.com run.googleapis.com serviceusage.googleapis.com storage.googleapis.com --project=alpipe-dev-1",
					devApply,
					"gcloud builds submit REPO --project=alpipe-dev-1 --region=europe-west1 --config=REPO/cloudbuild.yaml --gcs-source-staging-dir=gs://b-build/source --substitutions=COMMIT_SHA=TAG,_REGION=europe-west1,_DEPLOY=false",
					devApply,
				}, rolled(built)...),
			}},
		{name: "dev applies after a yes (no --yes)", env: deployed, typed: "yes\n",
			runs: [][]string{{"--project", "alpipe-dev-1", "--env", "dev", "infra"}}, want: map[string][]string{` apply `: {devApply}}},
		{name: "prod shows the plan and applies nothing unanswered", env: deployed, runs: prodInfra, want: prodPlanned, wantErr: true},
		{name: "prod takes no yes for the project ID", env: deployed, typed: "yes\n", runs: prodInfra, want: prodPlanned, wantErr: true},
		{name: "prod applies its plan once the project ID is typed", env: deployed, typed: "alpinashop-datos\n", runs: prodInfra,
			want: prodApplied},
		{name: "prod applies its plan with --yes", env: deployed, runs: [][]string{target(prod, "--yes", "infra")}, want: prodApplied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newDeployCheckout(t, tc.dirty)
			var run deployRun
			for i, args := range tc.runs {
				run = runDeploy(t, repo, tc.env, tc.typed, args...)
				if i < len(tc.runs)-1 && run.err != nil {
					t.Fatalf("deploy.sh %v: %v\n%s", args, run.err, run.out)
				}
			}
			if gotErr := run.err != nil; gotErr != tc.wantErr {
				t.Fatalf("deploy.sh %v: error %v, want error %v\n%s", tc.runs[len(tc.runs)-1], run.err, tc.wantErr, run.out)
			}
			commit := regexp.MustCompile(`COMMIT_SHA=[^,]*,`)
			for re, want := range tc.want {
				var got []string
				for _, c := range run.matching(re) {
					got = append(got, commit.ReplaceAllString(c, "COMMIT_SHA=TAG,"))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("calls matching %q (-want +got):\n%s\nall calls:\n%s\noutput:\n%s", re, diff, strings.Join(run.calls, "\n"), run.out)
				}
			}
		})
	}
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
				check(t, os.WriteFile(filepath.Join(repo, "terraform", f), []byte("max_instances = { IngestCSV = 1 }\n"), 0o644))
			}
			run := runDeploy(t, repo, tc.env, "", tc.args...)
			status, wants := "exit status 2", []string{tc.want}
			if tc.help {
				status, wants = "<nil>", []string{"bootstrap  enable", "smoke      dev only", "PROJECT_ID", "exits 2"}
				if strings.Contains(run.out, "set -euo") || strings.HasPrefix(run.out, "#") {
					t.Errorf("deploy.sh %s prints code or comment marks:\n%s", tc.name, run.out)
				}
			}
			if got := fmt.Sprint(run.err); got != status {
				t.Errorf("deploy.sh: %s, want %s\n%s", got, status, run.out)
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
	run := runDeploy(t, repo, nil, "", "--project", "alpipe-dev-1", "--env", "dev", "smoke")
	if run.err != nil {
		t.Fatalf("deploy.sh smoke: %v\n%s\ncalls:\n%s", run.err, run.out, strings.Join(run.calls, "\n"))
	}

	// The CSV it uploads.
	b, err := os.ReadFile(run.log + ".csv")
	if err != nil {
		t.Fatalf("no CSV uploaded: %v", err)
	}
	// Split by hand: a line is malformed on purpose (an unquoted decimal
	// comma), and the fields read here come before or after any comma.
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(b), "\r", "")), "\n")
	if len(lines) < 2 {
		t.Fatalf("CSV %q: want a header and rows", b)
	}
	smokeID := ""
	for _, l := range lines[1:] {
		r := strings.Split(l, ",")
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
	if !strings.Contains(pub[0], " --attribute=momento_evento=") {
		t.Errorf("the order is published without its event time: %s", pub[0])
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
		ours := func(c string) bool { return strings.Contains(c, want) && strings.Contains(c, "smoke-"+stamp) }
		if !slices.ContainsFunc(removed, ours) {
			t.Errorf("no removal of its object under %s:\n%s", want, strings.Join(removed, "\n"))
		}
	}
}
