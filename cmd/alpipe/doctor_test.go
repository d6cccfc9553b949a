package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeHost is a machine described by what is installed on it.
type fakeHost struct {
	paths    map[string]string // tool -> path
	outputs  map[string]string // "tool args..." -> its output
	failing  map[string]bool   // "tool args..." that exit non-zero
	files    map[string]bool   // existing paths -> whether a folder
	contents map[string]string // file -> content
	env      map[string]string
	cwd      string
	online   map[string]bool // URLs that answer
	alivePID int
	busyPort bool
	serving  bool
}

type fakeInfo struct {
	fs.FileInfo
	dir bool
}

func (f fakeInfo) IsDir() bool { return f.dir }

func (h fakeHost) host() host {
	return host{
		lookPath: func(name string) (string, error) {
			if p, ok := h.paths[name]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
		output: func(_ context.Context, name string, args ...string) (string, error) {
			cmd := strings.Join(append([]string{name}, args...), " ")
			if h.failing[cmd] {
				return h.outputs[cmd], errors.New("exit status 134")
			}
			return h.outputs[cmd], nil
		},
		stat: func(p string) (os.FileInfo, error) {
			if dir, ok := h.files[p]; ok {
				return fakeInfo{dir: dir}, nil
			}
			if _, ok := h.contents[p]; ok {
				return fakeInfo{}, nil
			}
			return nil, os.ErrNotExist
		},
		readFile: func(p string) ([]byte, error) {
			if c, ok := h.contents[p]; ok {
				return []byte(c), nil
			}
			return nil, os.ErrNotExist
		},
		alive:   func(pid int) bool { return pid == h.alivePID },
		serving: func(context.Context, string) bool { return h.serving },
		bindable: func(string) error {
			if h.busyPort {
				return errors.New("address already in use")
			}
			return nil
		},
		getenv: func(k string) string { return h.env[k] },
		getwd:  func() (string, error) { return h.cwd, nil },
		reachable: func(_ context.Context, url string) error {
			if h.online[url] {
				return nil
			}
			return errors.New("dial tcp: no route to host")
		},
	}
}

// complete is a team machine: every tool, the clone at /src/main with the
// provider mirror beside it and tf-check's tools built, and no network (so
// a test that needs a probe says so).
func complete() fakeHost {
	return fakeHost{
		paths: map[string]string{"go": "/usr/bin/go", "gcc": "/usr/bin/gcc", "gcloud": "/nonexistent-sdk/bin/gcloud",
			"java": "/usr/bin/java", "chromium": "/usr/bin/chromium", "chromedriver": "/usr/bin/chromedriver",
			"terraform": "/usr/local/bin/terraform", "shellcheck": "/usr/bin/shellcheck", "python3": "/usr/bin/python3",
			"curl": "/usr/bin/curl", "setsid": "/usr/bin/setsid"},
		outputs: map[string]string{
			"go version":        "go version go1.26.8 linux/amd64\n",
			"java -version":     `openjdk version "17.0.15" 2025-04-15` + "\n",
			"terraform version": "Terraform v1.11.4\non linux_amd64\n",
		},
		files: map[string]bool{"/nonexistent-sdk/platform/cloud-firestore-emulator": true,
			"/nonexistent-sdk/platform/pubsub-emulator": true,
			"/src/main/.cache/bin/tflint":               false, "/src/main/.cache/bin/tfsec": false, "/src/main/.cache/bin/terraform-docs": false,
		},
		contents: map[string]string{
			"/src/main/go.mod":                "module github.com/alpinashop/alpipe\n\ngo 1.26.8\n",
			"/src/shared/terraform/cliconfig": "#!/bin/sh\n",
		},
		cwd:    "/src/main/cmd/alpipe",
		env:    map[string]string{},
		online: map[string]bool{},
	}
}

func findingLines(fs []finding) []string {
	var out []string
	for _, f := range fs {
		mark := map[bool]string{true: "ok", false: "FAIL"}[f.OK]
		if !f.OK && f.Optional {
			mark = "WARN"
		}
		line := mark + " " + f.Check + ": " + f.Detail
		if !f.OK {
			line += " | fix: " + f.Fix
		}
		out = append(out, line)
	}
	return out
}

const (
	tfFix     = "install Terraform >= 1.9 from HashiCorp's apt repository (https://developer.hashicorp.com/terraform/install: add apt.releases.hashicorp.com, then apt-get install terraform) or unzip a release from https://releases.hashicorp.com/terraform/ into a folder on PATH"
	mirrorFix = "../shared is a folder beside your clone (here /src/shared) that CI's machines have: copy its terraform/ folder, the hashicorp/google provider mirror, from one of them; or give this machine HTTPS access to registry.terraform.io, from which scripts/tf-check.sh downloads the provider without the mirror (cached in .cache/terraform)"
	proxyFix  = "give this machine HTTPS access to the Go module proxy for scripts/tf-check.sh's first run (it builds them into .cache/bin, 1-5 minutes each), or copy .cache/bin from a machine that ran it"
	notBuilt  = "tflint is not built in /src/main/.cache/bin"
	tflint    = "/src/main/.cache/bin/tflint"
)

// TestDoctorFindings: on the complete machine every finding is as want
// says; on a changed one, want lists the findings that changed (a FAIL or
// WARN with its fix, or an ok that says where a piece comes from).
func TestDoctorFindings(t *testing.T) {
	without := func(tools ...string) func(*fakeHost) {
		return func(h *fakeHost) {
			for _, tool := range tools {
				delete(h.paths, tool)
			}
		}
	}
	output := func(cmd, out string) func(*fakeHost) { return func(h *fakeHost) { h.outputs[cmd] = out } }
	// failing: cmd prints out and exits non-zero.
	failing := func(cmd, out string) func(*fakeHost) {
		return func(h *fakeHost) { h.outputs[cmd], h.failing = out, map[string]bool{cmd: true} }
	}
	tests := []struct {
		name   string
		change func(*fakeHost)
		want   []string
	}{
		{name: "everything present", want: []string{
			"ok go: go1.26.8 linux/amd64",
			"ok gcc: /usr/bin/gcc",
			"ok gcloud: /nonexistent-sdk/bin/gcloud",
			"ok firestore emulator: /nonexistent-sdk/platform/cloud-firestore-emulator",
			"ok pubsub emulator: /nonexistent-sdk/platform/pubsub-emulator",
			`ok java: openjdk version "17.0.15" 2025-04-15`,
			"ok terraform: Terraform v1.11.4",
			"ok terraform provider: mirror /src/shared/terraform: terraform init runs offline",
			"ok terraform linters: tflint, tfsec and terraform-docs built in /src/main/.cache/bin",
			"ok shellcheck: /usr/bin/shellcheck",
			"ok python3: /usr/bin/python3",
			"ok curl: /usr/bin/curl",
			"ok setsid: /usr/bin/setsid",
			"ok chromium: /usr/bin/chromium",
			"ok chromedriver: /usr/bin/chromedriver",
			"ok port 127.0.0.1:8080: free",
			"ok data folder .local: absent: serve creates it",
		}},
		{name: "no gcc", change: without("gcc"),
			want: []string{"FAIL gcc: gcc is not on PATH: `go build ./cmd/alpipe` fails compiling DuckDB | fix: apt-get install gcc (macOS: xcode-select --install)"}},
		{name: "old Go", change: output("go version", "go version go1.22.1 linux/amd64"),
			want: []string{"FAIL go: go1.22 is too old: go.mod needs go1.26 | fix: install Go 1.26 or newer (https://go.dev/dl), then open a new shell"}},
		{name: "no gcloud: both emulators missing too", change: without("gcloud"), want: []string{
			"FAIL gcloud: gcloud is not on PATH: scripts/test.sh cannot start the emulators (scripts/test.sh -short needs none) | fix: apt-get install google-cloud-cli (Google's Debian repository)",
			"FAIL firestore emulator: gcloud is missing | fix: apt-get install google-cloud-cli-firestore-emulator (or: gcloud components install cloud-firestore-emulator)",
			"FAIL pubsub emulator: gcloud is missing | fix: apt-get install google-cloud-cli-pubsub-emulator (or: gcloud components install pubsub-emulator)",
		}},
		{name: "pubsub emulator not installed", change: func(h *fakeHost) { delete(h.files, "/nonexistent-sdk/platform/pubsub-emulator") },
			want: []string{"FAIL pubsub emulator: not installed in /nonexistent-sdk | fix: apt-get install google-cloud-cli-pubsub-emulator (or: gcloud components install pubsub-emulator)"}},
		{name: "Java 11", change: output("java -version", `openjdk version "11.0.2" 2019-01-15`),
			want: []string{"FAIL java: Java 11 is too old | fix: apt-get install openjdk-17-jre-headless"}},
		// A version readable from a failing command is taken; a failing
		// command with none is reported as failing (not "cannot read the version").
		{name: "java fails after printing its version: ok as before",
			change: failing("java -version", `openjdk version "17.0.15" 2025-04-15`)},
		{name: "java crashes with no version", change: failing("java -version", "Aborted (core dumped)\n"),
			want: []string{"FAIL java: java -version failed: Aborted (core dumped) | " +
				"fix: apt-get install openjdk-17-jre-headless"}},
		{name: "no chromium: optional, a warning", change: without("chromium"),
			want: []string{"WARN chromium: chromium is not on PATH | fix: scripts/chromium.sh (apt-get install chromium chromium-driver)"}},
		{name: "no terraform", change: without("terraform"), want: []string{"FAIL terraform: terraform is not on PATH | fix: " + tfFix}},
		{name: "terraform too old", change: output("terraform version", "Terraform v1.5.7\non linux_amd64\n"),
			want: []string{"FAIL terraform: Terraform v1.5.7 is too old: terraform/versions.tf needs >= 1.9 | fix: " + tfFix}},
		{name: "terraform 1.10 is newer than 1.9", change: output("terraform version", "Terraform v1.10.0\non linux_amd64\n"),
			want: []string{"ok terraform: Terraform v1.10.0"}},
		{name: "terraform's version after a CLI configuration warning", change: output("terraform version",
			"There are some problems with the CLI configuration:\n│ Warning: Unable to open CLI configuration file\n\nTerraform v1.11.4\non linux_amd64\n")},
		{name: "terraform prints no version", change: output("terraform version", "Segmentation fault\n"),
			want: []string{`FAIL terraform: cannot read the version in "Segmentation fault" | fix: ` + tfFix}},
		{name: "terraform crashes with no version", change: failing("terraform version", "Segmentation fault\n"),
			want: []string{"FAIL terraform: terraform version failed: Segmentation fault | fix: " + tfFix}},
		{name: "no provider mirror, no registry", change: func(h *fakeHost) { delete(h.contents, "/src/shared/terraform/cliconfig") },
			want: []string{"FAIL terraform provider: no mirror at /src/shared/terraform/cliconfig and registry.terraform.io does not answer (dial tcp: no route to host) | fix: " + mirrorFix}},
		{name: "no provider mirror: the registry", change: func(h *fakeHost) { delete(h.contents, "/src/shared/terraform/cliconfig"); h.online[registryURL] = true },
			want: []string{"ok terraform provider: no mirror at /src/shared/terraform/cliconfig: scripts/tf-check.sh downloads hashicorp/google from registry.terraform.io (it answers), cached in .cache/terraform"}},
		{name: "outside a clone", change: func(h *fakeHost) {
			h.cwd = "/home/ana"
			h.online[registryURL], h.online["https://proxy.golang.org"] = true, true
		}, want: []string{
			"ok terraform provider: not run inside an alpipe clone, so ../shared is unknown: scripts/tf-check.sh would download hashicorp/google from registry.terraform.io (it answers)",
			"ok terraform linters: not run inside an alpipe clone, so .cache/bin is unknown: scripts/tf-check.sh builds them from https://proxy.golang.org (it answers) on its first run",
		}},
		{name: "tf-check's tools not built, no proxy", change: func(h *fakeHost) {
			delete(h.files, "/src/main/.cache/bin/tfsec")
			h.outputs["go env GOPROXY"] = "https://goproxy.example.com|direct\n"
		}, want: []string{"FAIL terraform linters: tfsec is not built in /src/main/.cache/bin and https://goproxy.example.com does not answer (dial tcp: no route to host) | fix: " + proxyFix}},
		{name: "tf-check's tools not built, GOPROXY=off", change: func(h *fakeHost) { delete(h.files, tflint); h.outputs["go env GOPROXY"] = "off\n" },
			want: []string{"FAIL terraform linters: " + notBuilt + " and GOPROXY=off | fix: " + proxyFix}},
		{name: "tf-check's tools to build from the proxy", change: func(h *fakeHost) { delete(h.files, tflint); h.online["https://proxy.golang.org"] = true },
			want: []string{"ok terraform linters: " + notBuilt + ": scripts/tf-check.sh builds it from https://proxy.golang.org (it answers) on its first run"}},
		{name: "GOPROXY=direct: the tools' sources on GitHub", change: func(h *fakeHost) {
			delete(h.files, tflint)
			h.outputs["go env GOPROXY"], h.online["https://github.com"] = "direct\n", true
		}, want: []string{"ok terraform linters: " + notBuilt + ": scripts/tf-check.sh builds it from https://github.com (it answers) on its first run"}},
		{name: "TF_CHECK_BIN names where tf-check's tools are", change: func(h *fakeHost) { h.env["TF_CHECK_BIN"] = "/opt/tfbin" },
			want: []string{"FAIL terraform linters: tflint, tfsec and terraform-docs are not built in /opt/tfbin and https://proxy.golang.org does not answer (dial tcp: no route to host) | fix: " + proxyFix}},
		{name: "no shellcheck: a warning here", change: without("shellcheck"),
			want: []string{"WARN shellcheck: shellcheck is not on PATH | fix: apt-get install shellcheck"}},
		{name: "no shellcheck under CI: a failure", change: func(h *fakeHost) { delete(h.paths, "shellcheck"); h.env["CI"] = "true" },
			want: []string{"FAIL shellcheck: shellcheck is not on PATH | fix: apt-get install shellcheck"}},
		{name: "no python3, curl or setsid", change: without("python3", "curl", "setsid"), want: []string{
			"FAIL python3: python3 is not on PATH | fix: apt-get install python3",
			"FAIL curl: curl is not on PATH | fix: apt-get install curl",
			"FAIL setsid: setsid is not on PATH | fix: apt-get install util-linux",
		}},
		{name: "port taken by something else", change: func(h *fakeHost) { h.busyPort = true },
			want: []string{"FAIL port 127.0.0.1:8080: taken by another program: address already in use | fix: stop that program, or run alpipe serve --addr 127.0.0.1:0 (a free port) and pass its address as --server"}},
		{name: "port taken by alpipe serve is fine", change: func(h *fakeHost) { h.busyPort, h.serving = true, true },
			want: []string{"ok port 127.0.0.1:8080: an alpipe server already answers there: client commands will use it"}},
		{name: "data folder is a file", change: func(h *fakeHost) { h.files[".local"] = false },
			want: []string{"FAIL data folder .local: is a file, not a folder | fix: remove it, or pass --data with another folder"}},
		{name: "data folder of a running serve on the wall clock", change: func(h *fakeHost) {
			h.files[".local"], h.alivePID = true, 4242
			h.contents[".local/clock"], h.contents[".local/serve.lock"] = "wall\n", "4242\n"
		}, want: []string{"ok data folder .local: present, written on the wall clock (serve with the other clock needs another --data); used by a running alpipe serve (PID 4242)"}},
	}
	diagnoseOn := func(h fakeHost) []string {
		return findingLines(diagnose(context.Background(), h.host(), "127.0.0.1:8080", ".local"))
	}
	base := diagnoseOn(complete())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base
			if tt.change != nil {
				h := complete()
				tt.change(&h)
				got = nil
				for i, l := range diagnoseOn(h) {
					if l != base[i] {
						got = append(got, l)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDoctorTerraformMinimumIsTheModules: doctor's minimum is the one
// terraform/versions.tf requires.
func TestDoctorTerraformMinimumIsTheModules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "terraform", "versions.tf"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`required_version\s*=\s*">=\s*(\d+)\.(\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no required_version >= in terraform/versions.tf:\n%s", b)
	}
	if got, want := [2]int{terraformMin[0], terraformMin[1]}, [2]int{atoi(string(m[1])), atoi(string(m[2]))}; got != want {
		t.Errorf("doctor wants terraform >= %d.%d, terraform/versions.tf >= %d.%d", got[0], got[1], want[0], want[1])
	}
}

// TestDoctorHelpSaysWhichChecksAreOptional: --help names every check under
// required or optional, as diagnose classes it.
func TestDoctorHelpSaysWhichChecksAreOptional(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(context.Background(), []string{"doctor", "--help"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := map[bool]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "  required "); ok {
			lines[false] = s
		}
		if s, ok := strings.CutPrefix(l, "  optional "); ok {
			lines[true] = s
		}
	}
	h := complete()
	var wrong []string
	for _, f := range diagnose(context.Background(), h.host(), "127.0.0.1:8080", ".local") {
		name := strings.TrimSuffix(strings.TrimSuffix(f.Check, " 127.0.0.1:8080"), " .local")
		if !regexp.MustCompile(`(^|[:,] )` + regexp.QuoteMeta(name) + `\b`).MatchString(lines[f.Optional]) {
			wrong = append(wrong, name)
		}
	}
	if len(wrong) > 0 || len(lines) != 2 {
		t.Errorf("doctor --help does not class %q as diagnose does:\n%s", wrong, out.String())
	}
}

func TestDoctorPrintsFailuresAndWarnings(t *testing.T) {
	var out bytes.Buffer
	printFindings(&out, []finding{
		{Check: "go", OK: true, Detail: "go1.26.8 linux/amd64"},
		{Check: "terraform", Detail: "terraform is not on PATH", Needed: "scripts/tf-check.sh", Fix: "install it"},
		{Check: "chromium", Optional: true, Detail: "chromium is not on PATH", Needed: "the browser tests", Fix: "scripts/chromium.sh"},
	})
	want := `ok    go         go1.26.8 linux/amd64
FAIL  terraform  terraform is not on PATH
                 needed for scripts/tf-check.sh; fix: install it
warn  chromium   chromium is not on PATH
                 needed for the browser tests; fix: scripts/chromium.sh
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("doctor's text (-want +got):\n%s", diff)
	}
}

// TestDoctorOnThisMachine runs the real checks: on the team's machines
// everything required is present, so it exits 0 and prints one line a check.
func TestDoctorOnThisMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the machine (go, java -version, terraform version)")
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := dispatch(ctx, []string{"doctor", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out)
	for _, check := range []string{"go", "gcc", "gcloud", "firestore emulator", "pubsub emulator", "java", "terraform", "terraform provider",
		"terraform linters", "shellcheck", "python3", "curl", "setsid", "port 127.0.0.1:0", "data folder"} {
		if !strings.Contains(out.String(), "  "+check+" ") {
			t.Errorf("doctor printed no %q line:\n%s", check, out.String())
		}
	}
	if err != nil {
		t.Errorf("doctor on a team machine: %v\n%s", err, out.String())
	}
}
