package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
)

// doctor says in one line what a newcomer's first failure would bury deep in
// a build or a test (a DuckDB cgo error, an emulator that never answers).

type finding struct {
	Check    string `json:"check"`
	OK       bool   `json:"ok"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix,omitempty"`
	Needed   string `json:"needed_for"`
	Optional bool   `json:"optional,omitempty"` // does not fail the run
}

var (
	goVersionRE        = regexp.MustCompile(`go(\d+)\.(\d+)`)
	javaVersionRE      = regexp.MustCompile(`version "(\d+)`)
	terraformVersionRE = regexp.MustCompile(`(?m)^Terraform v(\d+)\.(\d+)\.\d+\S*`) // may follow a warning box (no CLI configuration file)
)

// terraformMin is terraform/versions.tf's required_version (a test keeps
// them equal).
var terraformMin = [2]int{1, 9}

const registryURL = "https://registry.terraform.io/.well-known/terraform.json"

// doctorAbout is doctor's --help arguments (a test holds it to diagnose's classes).
const doctorAbout = `none. No server is needed. Each line says ok, FAIL (with the fix) or warn.
  required (FAIL, exit status 1): go (>= 1.26), gcc, gcloud, firestore emulator, pubsub emulator, java (>= 17), terraform (>= 1.9), terraform provider (the mirror in ../shared/terraform beside the clone, or registry.terraform.io), terraform linters (tflint, tfsec and terraform-docs in .cache/bin, or the Go module proxy to build them), python3, curl, setsid, port (--addr), data folder (--data)
  optional (warn, exit status 0; what needs them skips): shellcheck (required when CI=true, as scripts/test.sh does), chromium, chromedriver`

func onPath(h host, name, needed, fix string, optional bool) finding {
	f := finding{Check: name, Needed: needed, Fix: fix, Optional: optional}
	if p, err := h.lookPath(name); err != nil {
		f.Detail = name + " is not on PATH"
	} else {
		f.OK, f.Detail, f.Fix = true, p, ""
	}
	return f
}

// repoRoot is the alpipe clone around the working folder, or "".
func repoRoot(h host) string {
	dir, err := h.getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := h.readFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/alpinashop/alpipe\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func diagnose(ctx context.Context, h host, addr, dataDir string) []finding {
	var fs []finding
	add := func(f finding) { fs = append(fs, f) }

	f := finding{Check: "go", Needed: "building alpipe and running the tests", Fix: "install Go 1.26 or newer (https://go.dev/dl), then open a new shell"}
	switch out, m, why := readVersion(ctx, h, goVersionRE, "go", "version"); {
	case why != "":
		f.Detail = why
	case atoi(m[1]) == 1 && atoi(m[2]) < 26:
		f.Detail = fmt.Sprintf("go1.%s is too old: go.mod needs go1.26", m[2])
	default:
		f.OK, f.Detail, f.Fix = true, strings.TrimPrefix(firstLine(out), "go version "), ""
	}
	add(f)

	f = onPath(h, "gcc", "DuckDB, linked through cgo into the alpipe CLI",
		"apt-get install gcc (macOS: xcode-select --install)", false)
	if !f.OK {
		f.Detail += ": `go build ./cmd/alpipe` fails compiling DuckDB"
	}
	add(f)

	sdk := ""
	f = onPath(h, "gcloud", "the Firestore and Pub/Sub emulators (scripts/test.sh)",
		"apt-get install google-cloud-cli (Google's Debian repository)", false)
	if f.OK {
		if real, err := filepath.EvalSymlinks(f.Detail); err == nil {
			f.Detail = real
		}
		sdk = filepath.Dir(filepath.Dir(f.Detail)) // <sdk>/bin/gcloud
	} else {
		f.Detail += ": scripts/test.sh cannot start the emulators (scripts/test.sh -short needs none)"
	}
	add(f)
	for _, e := range []struct{ check, dir, pkg, comp string }{
		{"firestore emulator", "cloud-firestore-emulator", "google-cloud-cli-firestore-emulator", "cloud-firestore-emulator"},
		{"pubsub emulator", "pubsub-emulator", "google-cloud-cli-pubsub-emulator", "pubsub-emulator"},
	} {
		f = finding{Check: e.check, Needed: "scripts/test.sh (the emulator tests and the production-parity stack)",
			Fix: "apt-get install " + e.pkg + " (or: gcloud components install " + e.comp + ")"}
		dir := filepath.Join(sdk, "platform", e.dir)
		if _, err := h.stat(dir); sdk == "" {
			f.Detail = "gcloud is missing"
		} else if err != nil {
			f.Detail = "not installed in " + sdk
		} else {
			f.OK, f.Detail, f.Fix = true, dir, ""
		}
		add(f)
	}

	f = finding{Check: "java", Needed: "the emulators (Java 17 or newer)", Fix: "apt-get install openjdk-17-jre-headless"}
	switch out, m, why := readVersion(ctx, h, javaVersionRE, "java", "-version"); {
	case why != "":
		f.Detail = why
	case atoi(m[1]) < 17:
		f.Detail = fmt.Sprintf("Java %s is too old", m[1])
	default:
		f.OK, f.Detail, f.Fix = true, firstLine(out), ""
	}
	add(f)

	root := repoRoot(h)
	add(checkTerraform(ctx, h))
	add(checkProvider(ctx, h, root))
	add(checkLinters(ctx, h, root))

	add(onPath(h, "shellcheck", "scripts/test.sh's lint of the shell scripts (skipped without it, a failure when CI=true)",
		"apt-get install shellcheck", h.getenv("CI") != "true"))
	for _, t := range []struct{ name, why, pkg string }{
		{"python3", "picks the emulators' free ports", "python3"},
		{"curl", "waits until each emulator answers", "curl"},
		{"setsid", "starts each emulator in a process group of its own, so that it can be stopped", "util-linux"},
	} {
		add(onPath(h, t.name, "scripts/test.sh, which "+t.why+" (scripts/lib/emulators.sh)", "apt-get install "+t.pkg, false))
	}

	for _, name := range []string{"chromium", "chromedriver"} {
		add(onPath(h, name, "the browser tests (they skip without it, and fail when CI=true)", "scripts/chromium.sh (apt-get install chromium chromium-driver)", true))
	}

	f = finding{Check: "port " + addr, Needed: "alpipe serve (--addr)"}
	switch err := h.bindable(addr); {
	case err == nil:
		f.OK, f.Detail = true, "free"
	case h.serving(ctx, addr):
		f.OK, f.Detail = true, "an alpipe server already answers there: client commands will use it"
	default:
		f.Detail = "taken by another program: " + err.Error()
		f.Fix = "stop that program, or run alpipe serve --addr 127.0.0.1:0 (a free port) and pass its address as --server"
	}
	add(f)

	f = finding{Check: "data folder " + dataDir, Needed: "alpipe serve (--data)"}
	switch st, err := h.stat(dataDir); {
	case errors.Is(err, os.ErrNotExist):
		f.OK, f.Detail = true, "absent: serve creates it"
	case err != nil:
		f.Detail, f.Fix = err.Error(), "check the folder's permissions, or pass --data with another folder"
	case !st.IsDir():
		f.Detail, f.Fix = "is a file, not a folder", "remove it, or pass --data with another folder"
	default:
		f.OK, f.Detail = true, "present"
		if b, err := h.readFile(filepath.Join(dataDir, "clock")); err == nil {
			// serve refuses a folder of the other clock (one clock per folder).
			f.Detail += ", written on the " + strings.TrimSpace(string(b)) + " clock (serve with the other clock needs another --data)"
		}
		if b, err := h.readFile(filepath.Join(dataDir, "serve.lock")); err == nil {
			if pid := atoi(strings.TrimSpace(string(b))); h.alive(pid) {
				f.Detail += fmt.Sprintf("; used by a running alpipe serve (PID %d)", pid)
			}
		}
	}
	add(f)
	return fs
}

func checkTerraform(ctx context.Context, h host) finding {
	f := finding{Check: "terraform", Needed: "scripts/tf-check.sh's terraform validate and terraform test (scripts/test.sh runs it)",
		Fix: fmt.Sprintf("install Terraform >= %d.%d from HashiCorp's apt repository (https://developer.hashicorp.com/terraform/install: add apt.releases.hashicorp.com, then apt-get install terraform) or unzip a release from https://releases.hashicorp.com/terraform/ into a folder on PATH", terraformMin[0], terraformMin[1])}
	_, m, why := readVersion(ctx, h, terraformVersionRE, "terraform", "version")
	switch {
	case why != "":
		f.Detail = why
	case atoi(m[1]) < terraformMin[0] || atoi(m[1]) == terraformMin[0] && atoi(m[2]) < terraformMin[1]:
		f.Detail = fmt.Sprintf("%s is too old: terraform/versions.tf needs >= %d.%d", m[0], terraformMin[0], terraformMin[1])
	default:
		f.OK, f.Detail, f.Fix = true, m[0], ""
	}
	return f
}

// readVersion: why says what stands in the way of a version to compare.
func readVersion(ctx context.Context, h host, re *regexp.Regexp, name string, args ...string) (out string, m []string, why string) {
	if _, err := h.lookPath(name); err != nil {
		return "", nil, name + " is not on PATH"
	}
	out, err := h.output(ctx, name, args...)
	switch m = re.FindStringSubmatch(out); {
	case m != nil:
		return out, m, ""
	case err != nil:
		return out, nil, name + " " + strings.Join(args, " ") + " failed: " + firstLine(out)
	}
	return out, nil, "cannot read the version in " + strconv.Quote(firstLine(out))
}

// checkProvider: scripts/tf-check.sh installs hashicorp/google from the
// mirror in ../shared/terraform when it sits beside the clone, else from
// the registry.
func checkProvider(ctx context.Context, h host, root string) finding {
	f := finding{Check: "terraform provider", Needed: "terraform validate and terraform test (scripts/tf-check.sh)"}
	registry := "give this machine HTTPS access to registry.terraform.io, from which scripts/tf-check.sh downloads the provider without the mirror (cached in .cache/terraform)"
	where := "not run inside an alpipe clone, so ../shared is unknown"
	f.Fix = "run alpipe doctor inside your clone: ../shared, the folder beside it that CI's machines have, holds the provider mirror in terraform/; or " + registry
	if root != "" {
		shared := filepath.Join(filepath.Dir(root), "shared")
		mirror := filepath.Join(shared, "terraform")
		if _, err := h.stat(filepath.Join(mirror, "cliconfig")); err == nil {
			f.OK, f.Detail, f.Fix = true, "mirror "+mirror+": terraform init runs offline", ""
			return f
		}
		where = "no mirror at " + filepath.Join(mirror, "cliconfig")
		f.Fix = "../shared is a folder beside your clone (here " + shared + ") that CI's machines have: copy its terraform/ folder, the hashicorp/google provider mirror, from one of them; or " + registry
	}
	if err := h.reachable(ctx, registryURL); err != nil {
		f.Detail = where + " and registry.terraform.io does not answer (" + err.Error() + ")"
		return f
	}
	f.OK, f.Fix = true, ""
	if root == "" {
		f.Detail = where + ": scripts/tf-check.sh would download hashicorp/google from registry.terraform.io (it answers)"
	} else {
		f.Detail = where + ": scripts/tf-check.sh downloads hashicorp/google from registry.terraform.io (it answers), cached in .cache/terraform"
	}
	return f
}

// checkLinters: scripts/tf-check.sh builds tflint, tfsec and terraform-docs
// once from the Go module proxy into .cache/bin (or TF_CHECK_BIN).
func checkLinters(ctx context.Context, h host, root string) finding {
	f := finding{Check: "terraform linters", Needed: "scripts/tf-check.sh (tflint, tfsec and terraform-docs)",
		Fix: "give this machine HTTPS access to the Go module proxy for scripts/tf-check.sh's first run (it builds them into .cache/bin, 1-5 minutes each), or copy .cache/bin from a machine that ran it"}
	bin := h.getenv("TF_CHECK_BIN")
	if bin == "" && root != "" {
		bin = filepath.Join(root, ".cache", "bin")
	}
	var absent []string
	for _, tool := range []string{"tflint", "tfsec", "terraform-docs"} {
		if _, err := h.stat(filepath.Join(bin, tool)); bin == "" || err != nil {
			absent = append(absent, tool)
		}
	}
	var missing, them string
	switch len(absent) {
	case 0:
		f.OK, f.Detail, f.Fix = true, "tflint, tfsec and terraform-docs built in "+bin, ""
		return f
	case 1:
		missing, them = absent[0]+" is", "it"
	default:
		missing, them = strings.Join(absent[:len(absent)-1], ", ")+" and "+absent[len(absent)-1]+" are", "them"
	}
	if bin == "" {
		missing = "not run inside an alpipe clone, so .cache/bin is unknown"
	} else {
		missing += " not built in " + bin
	}
	proxy, _ := h.output(ctx, "go", "env", "GOPROXY")
	proxy, _, _ = strings.Cut(strings.TrimSpace(proxy), ",")
	proxy, _, _ = strings.Cut(proxy, "|")
	switch proxy {
	case "":
		proxy = "https://proxy.golang.org"
	case "off":
		f.Detail = missing + " and GOPROXY=off"
		return f
	case "direct":
		proxy = "https://github.com" // where the three tools' sources are
	}
	if err := h.reachable(ctx, proxy); err != nil {
		f.Detail = missing + " and " + proxy + " does not answer (" + err.Error() + ")"
		return f
	}
	f.OK, f.Fix = true, ""
	f.Detail = missing + ": scripts/tf-check.sh builds " + them + " from " + proxy + " (it answers) on its first run"
	return f
}

func runDoctor(ctx context.Context, c *cmdline, stdout io.Writer) error {
	addr := c.String("addr", localapi.DefaultAddr, "the `ADDRESS` alpipe serve would listen on")
	data := c.String("data", cliEnv().DataDir, "the data `FOLDER` alpipe serve would use; ALPIPE_DATA_DIR sets the default")
	if err := c.parse(); err != nil {
		return err
	}
	findings := diagnose(ctx, realHost(), *addr, *data)
	if err := report(stdout, c.format, findings, func(w io.Writer) error { printFindings(w, findings); return nil }); err != nil {
		return err
	}
	failed := 0
	for _, f := range findings {
		if !f.OK && !f.Optional {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("doctor: %s missing (each line above says how to fix it)", render.Counted(failed, "required piece", "required pieces"))
	}
	return nil
}

func printFindings(w io.Writer, fs []finding) {
	width := 0
	for _, f := range fs {
		width = max(width, len(f.Check))
	}
	for _, f := range fs {
		mark := "ok  "
		if !f.OK {
			mark = "FAIL"
			if f.Optional {
				mark = "warn"
			}
		}
		fmt.Fprintf(w, "%s  %-*s  %s\n", mark, width, f.Check, f.Detail)
		if !f.OK {
			fmt.Fprintf(w, "      %-*s  needed for %s; fix: %s\n", width, "", f.Needed, f.Fix)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
