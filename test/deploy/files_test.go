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
	"gopkg.in/yaml.v3"

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
	check(t, err)
	if len(files) == 0 {
		t.Fatal("no Terraform files")
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		check(t, err)
		if got := hclwrite.Format(src); !bytes.Equal(got, src) {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s is not formatted (terraform fmt terraform)", rel)
		}
	}
}

// stage is a Dockerfile stage: its base image and instructions.
type stage struct {
	From  string
	Lines []string
}

func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	var stages []stage
	var cont strings.Builder
	sc := bufio.NewScanner(strings.NewReader(readRepoFile(t, "Dockerfile")))
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
	f, err := modfile.ParseLax("go.mod", []byte(readRepoFile(t, "go.mod")), nil)
	check(t, err)
	if want := "golang:" + f.Go.Version + "-"; !strings.HasPrefix(build.From, want) {
		t.Errorf("build stage %s, want %s* (go.mod says go %s)", build.From, want, f.Go.Version)
	}

	all := strings.Join(build.Lines, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/server"} {
		if !strings.Contains(all, want) {
			t.Errorf("build stage lacks %q", want)
		}
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
	script := readRepoFile(t, "scripts/deploy.sh")
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, out)
		}
	} else {
		t.Log("bash not found: syntax not checked")
	}

	// What it runs is TestDeployScriptBehaviour's and TestSmokeWritesOnlyItsOwnRowsAndRemovesThem's.
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
	d, err := tfconfig.Open("")
	check(t, err)
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

type buildStep struct {
	ID         string   `yaml:"id"`
	Name       string   `yaml:"name"`
	Entrypoint string   `yaml:"entrypoint"`
	Args       []string `yaml:"args"`
	Env        []string `yaml:"env"`
	Dir        string   `yaml:"dir"`
	Script     string   `yaml:"script"`
	WaitFor    []string `yaml:"waitFor"`
}

type buildConfig struct {
	Steps          []buildStep       `yaml:"steps"`
	Substitutions  map[string]string `yaml:"substitutions"`
	ServiceAccount string            `yaml:"serviceAccount"`
	Options        map[string]any    `yaml:"options"`
	Images         []string          `yaml:"images"`
	Timeout        string            `yaml:"timeout"`
}

func loadCloudBuild(t *testing.T) (buildConfig, string) {
	t.Helper()
	src := readRepoFile(t, "cloudbuild.yaml")
	var cfg buildConfig
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true) // a misspelt field is ignored by nobody
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("cloudbuild.yaml: %v", err)
	}
	if len(cfg.Steps) == 0 {
		t.Fatal("cloudbuild.yaml has no steps")
	}
	return cfg, src
}

// script returns a step's shell text with line continuations joined.
func (s buildStep) script() string {
	text := strings.Join(append([]string{s.Entrypoint, s.Script}, s.Args...), "\n")
	return strings.ReplaceAll(text, "\\\n", " ")
}

var (
	dockerRun = regexp.MustCompile(`docker run((?:\s+-[^\s]+)*)\s+([^\s-][^\s]*)`)
	repoPath  = regexp.MustCompile(`(?:^|[\s=])((?:\./)?(?:scripts|terraform|cmd|internal|functions|testdata|\.ci)(?:/[\w.-]+)*|Dockerfile)(?:$|[\s;&|)])`)
	substRef  = regexp.MustCompile(`\$\{(_[A-Z0-9_]+)\}|\$(_[A-Z0-9_]+)`)
)

func TestCloudBuildImagesArePinned(t *testing.T) {
	cfg, _ := loadCloudBuild(t)
	images := 0
	for _, s := range cfg.Steps {
		if !pinned(s.Name) {
			t.Errorf("step %s: image %s is not pinned by digest or explicit version", s.ID, s.Name)
		}
		images++
		for _, m := range dockerRun.FindAllStringSubmatch(s.script(), -1) {
			images++
			if !pinned(m[2]) {
				t.Errorf("step %s: docker run image %s is not pinned", s.ID, m[2])
			}
		}
	}
	if images <= len(cfg.Steps) {
		t.Error("no sidecar image found: the emulators step changed shape")
	}
	// The test toolchain is the image's: same Go as the Dockerfile build stage.
	build := parseDockerfile(t)[0].From
	isGo := func(s buildStep) bool { return strings.HasPrefix(s.Name, "golang:") }
	if !slices.ContainsFunc(cfg.Steps, isGo) {
		t.Error("no step runs the Go toolchain")
	}
	for _, s := range cfg.Steps {
		if isGo(s) && s.Name != build {
			t.Errorf("step %s uses %s, the Dockerfile builds with %s", s.ID, s.Name, build)
		}
	}
}

func TestCloudBuildReferencesExistingFiles(t *testing.T) {
	cfg, _ := loadCloudBuild(t)
	root := repoRoot(t)
	seen := 0
	for _, s := range cfg.Steps {
		refs := repoPath.FindAllStringSubmatch(s.script(), -1)
		if s.Dir != "" {
			refs = append(refs, []string{"", s.Dir})
		}
		for _, m := range refs {
			seen++
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("step %s refers to %s: %v", s.ID, m[1], err)
			}
		}
	}
	if seen < 2 {
		t.Errorf("only %d file references found (Dockerfile and terraform expected)", seen)
	}
}

func TestCloudBuildSubstitutionsAreDocumented(t *testing.T) {
	cfg, src := loadCloudBuild(t)
	var header strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		header.WriteString(line + "\n")
	}
	if header.Len() == 0 {
		t.Fatal("no comment block at the top of cloudbuild.yaml")
	}
	for key := range cfg.Substitutions {
		if !strings.HasPrefix(key, "_") {
			t.Errorf("user substitution %s must start with '_'", key)
		}
		if !regexp.MustCompile(`#\s+` + key + `\s`).MatchString(header.String()) {
			t.Errorf("substitution %s is not documented in the header", key)
		}
	}
	for _, s := range cfg.Steps {
		for _, m := range substRef.FindAllStringSubmatch(s.script(), -1) {
			key := m[1] + m[2]
			if _, ok := cfg.Substitutions[key]; !ok {
				t.Errorf("step %s uses $%s, which has no default in substitutions", s.ID, key)
			}
		}
	}
	for _, builtin := range []string{"COMMIT_SHA", "PROJECT_ID"} {
		if !strings.Contains(header.String(), builtin) {
			t.Errorf("built-in substitution %s is used but not explained in the header", builtin)
		}
	}
}

func TestCloudBuildPipeline(t *testing.T) {
	cfg, _ := loadCloudBuild(t)
	for _, s := range cfg.Steps {
		if s.ID == "" {
			t.Errorf("step %s has no id", s.Name)
		}
	}
	find := func(what string, pred func(buildStep) bool) buildStep {
		t.Helper()
		i := slices.IndexFunc(cfg.Steps, pred)
		if i < 0 {
			t.Fatalf("no step %s", what)
		}
		return cfg.Steps[i]
	}
	test := find("running go vet and go test", func(s buildStep) bool {
		return strings.Contains(s.script(), "go vet ./...") && strings.Contains(s.script(), "go test")
	})
	for _, v := range []string{"FIRESTORE_EMULATOR_HOST=", "PUBSUB_EMULATOR_HOST="} {
		if !strings.Contains(strings.Join(test.Env, " "), v) {
			t.Errorf("test step %s does not point %s at an emulator", test.ID, v)
		}
	}
	find("starting the gcloud emulators", func(s buildStep) bool {
		return strings.Contains(s.script(), "google-cloud-cli:") && strings.Contains(s.script(), "emulators firestore start") &&
			strings.Contains(s.script(), "emulators pubsub start")
	})
	find("building the image tagged with the commit", func(s buildStep) bool {
		return strings.Contains(s.script(), "docker build") && strings.Contains(s.script(), ":$COMMIT_SHA")
	})
	deploy := find("rolling the services to a digest", func(s buildStep) bool {
		return strings.Contains(s.script(), "gcloud run services update")
	})
	if !strings.Contains(deploy.script(), "*@sha256:*") || !strings.Contains(deploy.script(), `--image="$$image"`) {
		t.Error("the deploy step must refuse anything but a digest reference")
	}

	// Cross-checks with Terraform: names the pipeline hard-codes.
	tf := readModuleData(t)
	want := map[string]string{"_SERVICES": strings.Join(serviceNames(t), " "),
		"_REPOSITORY": tf.ArtifactRepository, "_REGION": tf.Region}
	sub := cfg.Substitutions
	got := map[string]string{"_SERVICES": strings.Join(strings.Fields(sub["_SERVICES"]), " "),
		"_REPOSITORY": sub["_REPOSITORY"], "_REGION": sub["_REGION"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("substitutions (-terraform +cloudbuild):\n%s", diff)
	}
	if want := "serviceAccounts/" + tf.DeployerAccountID + "@$PROJECT_ID.iam.gserviceaccount.com"; !strings.HasSuffix(cfg.ServiceAccount, want) {
		t.Errorf("serviceAccount = %q, want the Terraform deployer (...%s)", cfg.ServiceAccount, want)
	}
	if cfg.Options["logging"] != "CLOUD_LOGGING_ONLY" {
		t.Error("a user-specified build service account needs options.logging: CLOUD_LOGGING_ONLY (or a logs bucket)")
	}
}
