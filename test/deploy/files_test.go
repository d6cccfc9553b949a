package deploy

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"golang.org/x/mod/modfile"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// terraform fmt is hclwrite.Format plus a few rewrites of legacy syntax; on
// machines without the Terraform binary this keeps the formatting checked.
func TestTerraformIsFormatted(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "terraform")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tfvars") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Terraform files")
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := hclwrite.Format(src); !bytes.Equal(got, src) {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s is not formatted (terraform fmt terraform)", rel)
		}
	}
}

// dockerfile is the parsed Dockerfile: its stages' base images and the
// instructions of each stage.
type stage struct {
	From  string
	Lines []string
}

func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var cont strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cont.WriteString(line)
		instr := cont.String()
		cont.Reset()
		if f := strings.Fields(instr); strings.EqualFold(f[0], "FROM") {
			stages = append(stages, stage{From: f[1]})
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("instruction before FROM: %s", instr)
		}
		stages[len(stages)-1].Lines = append(stages[len(stages)-1].Lines, instr)
	}
	if len(stages) < 2 {
		t.Fatalf("got %d stages, want a multi-stage build", len(stages))
	}
	return stages
}

var (
	digestPinned  = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	versionPinned = regexp.MustCompile(`:v?[0-9]+(\.[0-9]+)+(-[A-Za-z0-9.]+)*$`)
)

// pinned reports whether an image reference names one immutable image (a
// digest) or one release (an explicit version tag, never latest or a bare
// major version).
func pinned(ref string) bool {
	return digestPinned.MatchString(ref) || versionPinned.MatchString(ref)
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	build, final := stages[0], stages[len(stages)-1]
	for _, s := range stages {
		if !pinned(s.From) {
			t.Errorf("FROM %s is not pinned by digest or version", s.From)
		}
	}
	if !digestPinned.MatchString(final.From) {
		t.Errorf("runtime base %s must be pinned by digest", final.From)
	}
	if !strings.HasPrefix(final.From, "gcr.io/distroless/static") {
		t.Errorf("runtime base %s: want a distroless static image (no libc, no shell)", final.From)
	}

	// The build toolchain is exactly go.mod's, so no toolchain is downloaded.
	mod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", mod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "golang:" + f.Go.Version + "-"; !strings.HasPrefix(build.From, want) {
		t.Errorf("build stage %s, want %s* (go.mod says go %s)", build.From, want, f.Go.Version)
	}

	all := strings.Join(build.Lines, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/server"} {
		if !strings.Contains(all, want) {
			t.Errorf("build stage lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), "cmd", "server")); err != nil {
		t.Errorf("the image builds ./cmd/server: %v", err)
	}
	user := ""
	for _, l := range final.Lines {
		if f := strings.Fields(l); strings.EqualFold(f[0], "USER") {
			user = f[1]
		}
	}
	if user == "" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0") {
		t.Errorf("runtime stage USER = %q, want a non-root user", user)
	}
}

func TestDeployScript(t *testing.T) {
	path := filepath.Join(repoRoot(t), "scripts", "deploy.sh")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script := string(src)
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, out)
		}
	} else {
		t.Log("bash not found: syntax not checked")
	}

	// "all" runs the steps of a first deployment in the documented order;
	// smoke only runs when named.
	order := regexp.MustCompile(`all\) STEPS\+=\(([a-z ]+)\)`).FindStringSubmatch(script)
	if order == nil {
		t.Fatal("the step list of all not found")
	}
	if diff := cmp.Diff([]string{"bootstrap", "infra", "build", "deploy"}, strings.Fields(order[1])); diff != "" {
		t.Errorf("step order (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"gcloud services enable", "apply", "gcloud builds submit",
		`-var "image=$image"`, "gcloud storage cp", "gcloud pubsub topics publish",
		"--attribute=\"momento_evento=", "bq query",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("deploy.sh lacks %q", want)
		}
	}

	// Same APIs as terraform/apis.tf.
	apis := regexp.MustCompile(`(?s)APIS=\((.*?)\)`).FindStringSubmatch(script)
	if apis == nil {
		t.Fatal("APIS list not found")
	}
	got := strings.Fields(apis[1])
	sort.Strings(got)
	if diff := cmp.Diff(readModuleData(t).APIs, got); diff != "" {
		t.Errorf("APIs (-terraform +deploy.sh):\n%s", diff)
	}

	// Names the script hard-codes are the ones Terraform creates.
	services := serviceNames(t)
	loop := regexp.MustCompile(`for service in ([a-z -]+); do`).FindStringSubmatch(script)
	if loop == nil || !cmp.Equal(strings.Fields(loop[1]), services) {
		t.Errorf("deploy.sh rolls %v, Terraform's services are %v", loop, services)
	}
	if !strings.Contains(script, "PROBE_SERVICE="+services[0]+"\n") {
		t.Errorf("the infra step should probe %s for the running image", services[0])
	}
	d, err := tfconfig.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(d.SchedulerJobs, func(j tfconfig.SchedulerJob) bool { return j.Function == "AdvanceWatermark" })
	if i < 0 || !strings.Contains(script, "scheduler jobs run "+d.SchedulerJobs[i].Name+" ") {
		t.Errorf("deploy.sh does not run the tick's scheduler job (topology.json: %v)", d.SchedulerJobs)
	}

	// A failing call must stop the script, never read as "nothing there".
	for i, line := range strings.Split(script, "\n") {
		code := strings.TrimSpace(line)
		if strings.HasPrefix(code, "#") {
			continue
		}
		if swallowed.MatchString(code) {
			t.Errorf("deploy.sh:%d swallows a failure: %s", i+1, code)
		}
	}
	// The tag is computed once per run (a modified tree's tag carries the time).
	if n := strings.Count(script, "$(image_tag)"); n != 1 {
		t.Errorf("image_tag is called %d times, want once (in main), shared by build and deploy", n)
	}
	// The first infra apply on a new project targets only what the build
	// needs; each target must be a resource of the configuration.
	targets := regexp.MustCompile(`(?s)BOOTSTRAP_TARGETS=\((.*?)\)`).FindStringSubmatch(script)
	if targets == nil {
		t.Fatal("BOOTSTRAP_TARGETS list not found")
	}
	resources := parseModule(t).resources()
	for _, target := range strings.Fields(targets[1]) {
		if _, ok := resources[strings.Trim(target, "'")]; !ok {
			t.Errorf("bootstrap target %s is not a resource of terraform/ (an instance key would need checking here)", target)
		}
	}
}

// swallowed matches shell that turns a failed command into success.
var swallowed = regexp.MustCompile(`\|\|\s*(true|:)(\s|;|$)|\|\|\s*echo\b`)

// serviceNames returns the Cloud Run service names in IngestCSV,
// AggregateOrders, AdvanceWatermark, SweepLanding order.
func serviceNames(t *testing.T) []string {
	t.Helper()
	services := loadServices(t)
	var out []string
	for _, fn := range []string{"IngestCSV", "AggregateOrders", "AdvanceWatermark", "SweepLanding"} {
		out = append(out, services[fn].Name)
	}
	if len(services) != len(out) {
		t.Fatalf("Terraform declares %d functions, serviceNames knows %d: add the new one", len(services), len(out))
	}
	return out
}
