package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

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
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "cloudbuild.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg buildConfig
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	dec.KnownFields(true) // a misspelt field is ignored by nobody
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("cloudbuild.yaml: %v", err)
	}
	if len(cfg.Steps) == 0 {
		t.Fatal("cloudbuild.yaml has no steps")
	}
	return cfg, string(src)
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
	found := false
	for _, s := range cfg.Steps {
		if strings.HasPrefix(s.Name, "golang:") {
			found = true
			if s.Name != build {
				t.Errorf("step %s uses %s, the Dockerfile builds with %s", s.ID, s.Name, build)
			}
		}
	}
	if !found {
		t.Error("no step runs the Go toolchain")
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
	steps := map[string]buildStep{}
	for _, s := range cfg.Steps {
		if s.ID == "" {
			t.Errorf("step %s has no id", s.Name)
		}
		steps[s.ID] = s
	}
	find := func(what string, pred func(buildStep) bool) buildStep {
		t.Helper()
		for _, s := range cfg.Steps {
			if pred(s) {
				return s
			}
		}
		t.Fatalf("no step %s", what)
		return buildStep{}
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
	if diff := cmp.Diff(serviceNames(t), strings.Fields(cfg.Substitutions["_SERVICES"])); diff != "" {
		t.Errorf("_SERVICES (-terraform +cloudbuild):\n%s", diff)
	}
	if got, want := cfg.Substitutions["_REPOSITORY"], tf.ArtifactRepository; got != want {
		t.Errorf("_REPOSITORY = %q, terraform default %q", got, want)
	}
	if got, want := cfg.Substitutions["_REGION"], tf.Region; got != want {
		t.Errorf("_REGION = %q, terraform default %q", got, want)
	}
	if want := "serviceAccounts/" + tf.DeployerAccountID + "@$PROJECT_ID.iam.gserviceaccount.com"; !strings.HasSuffix(cfg.ServiceAccount, want) {
		t.Errorf("serviceAccount = %q, want the Terraform deployer (...%s)", cfg.ServiceAccount, want)
	}
	if cfg.Options["logging"] != "CLOUD_LOGGING_ONLY" {
		t.Error("a user-specified build service account needs options.logging: CLOUD_LOGGING_ONLY (or a logs bucket)")
	}
}
