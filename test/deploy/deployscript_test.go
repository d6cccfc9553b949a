package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
  "terraform -chdir="*" output -json bucket_names") echo '{"build": "b-build", "landing": "b-landing"}' ;;
  "terraform -chdir="*" output -raw image_repository") printf 'europe-west1-docker.pkg.dev/p/alpipe' ;;
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
}

func (r deployRun) matching(re string) []string {
	var out []string
	rx := regexp.MustCompile(re)
	for _, c := range r.calls {
		if rx.MatchString(c) {
			out = append(out, c)
		}
	}
	return out
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
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "deploy.sh"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, d := range []string{"scripts", "terraform"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "deploy.sh"), src, 0o755); err != nil {
		t.Fatal(err)
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
		if err := os.WriteFile(filepath.Join(repo, "terraform", "main.tf"), []byte("# edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

func runDeploy(t *testing.T, repo string, env map[string]string, steps ...string) deployRun {
	t.Helper()
	// Outside the checkout, so that the stubs do not make the tree dirty.
	bin := repo + "-stubs"
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"gcloud", "terraform", "bq"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(stubTools), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(bin, "calls.log")
	_ = os.Remove(log)
	cmd := exec.Command(filepath.Join(repo, "scripts", "deploy.sh"), steps...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STUB_LOG="+log, "AUTO_APPROVE=1",
		"IMAGE=", "IMAGE_TAG=", "STUB_RUNNING=", "STUB_FAIL=")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	b, _ := os.ReadFile(log)
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			calls = append(calls, l)
		}
	}
	return deployRun{calls: calls, err: err, out: string(out)}
}

const (
	running = "europe-west1-docker.pkg.dev/p/alpipe/server@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	built   = "europe-west1-docker.pkg.dev/p/alpipe/server@sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

func TestDeployScriptBehaviour(t *testing.T) {
	tests := []struct {
		name  string
		dirty bool
		env   map[string]string
		runs  [][]string // invocations, each a list of steps, in order
		// want: per regexp over the calls of the last invocation, the calls
		// that match it, in order.
		want    map[string][]string
		wantErr bool
	}{
		{
			name: "infra on a deployed project passes the running image",
			env:  map[string]string{"STUB_RUNNING": running},
			runs: [][]string{{"infra"}},
			want: map[string][]string{` apply `: {"terraform -chdir=TF apply -input=false -var project_id=alpinashop-datos -var region=europe-west1 -auto-approve -var image=" + running}},
		},
		{
			name: "infra on a new project applies only what the build needs",
			runs: [][]string{{"infra"}},
			want: map[string][]string{` apply `: {"terraform -chdir=TF apply -input=false -var project_id=alpinashop-datos -var region=europe-west1 -auto-approve " +
				"-target=google_project_service.api -target=google_artifact_registry_repository.images " +
				"-target=google_artifact_registry_repository_iam_member.deployer_writer -target=google_storage_bucket.bucket " +
				"-target=google_storage_bucket_iam_member.deployer_build_sources -target=google_project_iam_member.deployer_log_writer"}},
		},
		{
			name:    "a failing gcloud call stops infra before any apply",
			env:     map[string]string{"STUB_RUNNING": running, "STUB_FAIL": "run services list"},
			runs:    [][]string{{"infra"}},
			want:    map[string][]string{` apply `: nil},
			wantErr: true,
		},
		{
			name:  "build and deploy of a modified tree in one run name one image",
			dirty: true,
			runs:  [][]string{{"build", "deploy"}},
			want: map[string][]string{
				` apply `: {"terraform -chdir=TF apply -input=false -var project_id=alpinashop-datos -var region=europe-west1 -auto-approve -var image=" + built},
				`run services update`: {
					"gcloud run services update alpipe-ingest --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet",
					"gcloud run services update alpipe-orders --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet",
					"gcloud run services update alpipe-watermark --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet",
					"gcloud run services update alpipe-sweeper --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet",
				},
			},
		},
		{
			name:  "deploy after a separate build run deploys what was built",
			dirty: true,
			runs:  [][]string{{"build"}, {"deploy"}},
			want: map[string][]string{
				` apply `:             {"terraform -chdir=TF apply -input=false -var project_id=alpinashop-datos -var region=europe-west1 -auto-approve -var image=" + built},
				`artifacts|builds`:    nil, // no new lookup by a recomputed tag
				`run services update`: {"gcloud run services update alpipe-ingest --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet", "gcloud run services update alpipe-orders --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet", "gcloud run services update alpipe-watermark --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet", "gcloud run services update alpipe-sweeper --project=alpinashop-datos --region=europe-west1 --image=" + built + " --quiet"},
			},
		},
		{
			name:    "deploy with nothing built refuses",
			runs:    [][]string{{"deploy"}},
			want:    map[string][]string{` apply `: nil},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := newDeployCheckout(t, tc.dirty)
			var run deployRun
			for i, steps := range tc.runs {
				run = runDeploy(t, repo, tc.env, steps...)
				if i < len(tc.runs)-1 && run.err != nil {
					t.Fatalf("deploy.sh %v: %v\n%s", steps, run.err, run.out)
				}
			}
			if gotErr := run.err != nil; gotErr != tc.wantErr {
				t.Fatalf("deploy.sh %v: error %v, want error %v\n%s", tc.runs[len(tc.runs)-1], run.err, tc.wantErr, run.out)
			}
			tfDir := filepath.Join(repo, "scripts", "..", "terraform")
			for re, want := range tc.want {
				var got []string
				for _, c := range run.matching(re) {
					got = append(got, strings.ReplaceAll(c, tfDir, "TF"))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("calls matching %q (-want +got):\n%s\nall calls:\n%s\noutput:\n%s", re, diff, strings.Join(run.calls, "\n"), run.out)
				}
			}
		})
	}
}
