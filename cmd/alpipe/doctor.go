package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
)

// doctor checks what a laptop needs for the README's two set-up commands
// and for `alpipe serve`, and prints the fix for every missing piece. A
// newcomer's first failure is usually a missing tool deep in a build or a
// test (a DuckDB cgo error, an emulator that never answers); this says it in
// one line, before the wait.

// finding is one check's outcome.
type finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Needed says what fails without it; optional checks do not fail the run.
	Needed   string `json:"needed_for"`
	Optional bool   `json:"optional,omitempty"`
}

// host is what doctor reads of the machine, injectable for tests.
type host struct {
	lookPath func(string) (string, error)
	output   func(ctx context.Context, name string, args ...string) (string, error)
	stat     func(string) (os.FileInfo, error)
	readFile func(string) ([]byte, error)
	alive    func(pid int) bool
	// serving answers whether an alpipe server answers at addr, and whether
	// addr can be listened on.
	serving  func(ctx context.Context, addr string) bool
	bindable func(addr string) error
}

func realHost() host {
	return host{
		lookPath: exec.LookPath,
		output: func(ctx context.Context, name string, args ...string) (string, error) {
			out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
			return string(out), err
		},
		stat:     os.Stat,
		readFile: os.ReadFile,
		alive: func(pid int) bool {
			return pid > 0 && syscall.Kill(pid, 0) == nil
		},
		serving: func(ctx context.Context, addr string) bool {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+localapi.HealthPath, nil)
			if err != nil {
				return false
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		},
		bindable: func(addr string) error {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			return l.Close()
		},
	}
}

var (
	goVersionRE   = regexp.MustCompile(`go(\d+)\.(\d+)`)
	javaVersionRE = regexp.MustCompile(`version "(\d+)`)
)

// diagnose runs every check; it never fails, it reports.
func diagnose(ctx context.Context, h host, addr, dataDir string) []finding {
	var fs []finding
	add := func(f finding) { fs = append(fs, f) }

	// Go 1.26: go.mod's go line.
	f := finding{Check: "go", Needed: "building alpipe and running the tests", Fix: "install Go 1.26 or newer (https://go.dev/dl), then open a new shell"}
	if _, err := h.lookPath("go"); err != nil {
		f.Detail = "go is not on PATH"
	} else if out, err := h.output(ctx, "go", "version"); err != nil {
		f.Detail = "go version failed: " + firstLine(out)
	} else if m := goVersionRE.FindStringSubmatch(out); m == nil {
		f.Detail = "cannot read the version in " + strconv.Quote(firstLine(out))
	} else if major, _ := strconv.Atoi(m[1]); major == 1 && atoi(m[2]) < 26 {
		f.Detail = fmt.Sprintf("go1.%s is too old: go.mod needs go1.26", m[2])
	} else {
		f.OK, f.Detail, f.Fix = true, strings.TrimPrefix(firstLine(out), "go version "), ""
	}
	add(f)

	f = finding{Check: "gcc", Needed: "DuckDB, linked through cgo into the alpipe CLI", Fix: "apt-get install gcc (macOS: xcode-select --install)"}
	if p, err := h.lookPath("gcc"); err != nil {
		f.Detail = "gcc is not on PATH: `go build ./cmd/alpipe` fails compiling DuckDB"
	} else {
		f.OK, f.Detail, f.Fix = true, p, ""
	}
	add(f)

	sdk := ""
	f = finding{Check: "gcloud", Needed: "the Firestore and Pub/Sub emulators (scripts/test.sh)", Fix: "apt-get install google-cloud-cli (Google's Debian repository)"}
	if p, err := h.lookPath("gcloud"); err != nil {
		f.Detail = "gcloud is not on PATH: scripts/test.sh cannot start the emulators (scripts/test.sh -short needs none)"
	} else {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		sdk = filepath.Dir(filepath.Dir(p)) // <sdk>/bin/gcloud
		f.OK, f.Detail, f.Fix = true, p, ""
	}
	add(f)
	for _, e := range []struct{ check, dir, pkg, comp string }{
		{"firestore emulator", "cloud-firestore-emulator", "google-cloud-cli-firestore-emulator", "cloud-firestore-emulator"},
		{"pubsub emulator", "pubsub-emulator", "google-cloud-cli-pubsub-emulator", "pubsub-emulator"},
	} {
		f = finding{Check: e.check, Needed: "scripts/test.sh (the emulator tests and the production-parity stack)",
			Fix: "apt-get install " + e.pkg + " (or: gcloud components install " + e.comp + ")"}
		switch {
		case sdk == "":
			f.Detail = "gcloud is missing"
		default:
			if _, err := h.stat(filepath.Join(sdk, "platform", e.dir)); err != nil {
				f.Detail = "not installed in " + sdk
			} else {
				f.OK, f.Detail, f.Fix = true, filepath.Join(sdk, "platform", e.dir), ""
			}
		}
		add(f)
	}

	f = finding{Check: "java", Needed: "the emulators (Java 17 or newer)", Fix: "apt-get install openjdk-17-jre-headless"}
	if _, err := h.lookPath("java"); err != nil {
		f.Detail = "java is not on PATH"
	} else if out, _ := h.output(ctx, "java", "-version"); javaVersionRE.FindStringSubmatch(out) == nil {
		f.Detail = "cannot read the version in " + strconv.Quote(firstLine(out))
	} else if v := atoi(javaVersionRE.FindStringSubmatch(out)[1]); v < 17 {
		f.Detail = fmt.Sprintf("Java %d is too old", v)
	} else {
		f.OK, f.Detail, f.Fix = true, firstLine(out), ""
	}
	add(f)

	for _, b := range []struct{ name, pkg string }{{"chromium", "chromium"}, {"chromedriver", "chromium-driver"}} {
		f = finding{Check: b.name, Optional: true, Needed: "the dashboard's browser tests (they skip without it)", Fix: "scripts/chromium.sh (apt-get install chromium chromium-driver)"}
		if p, err := h.lookPath(b.name); err != nil {
			f.Detail = b.name + " is not on PATH"
		} else {
			f.OK, f.Detail, f.Fix = true, p, ""
		}
		add(f)
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

func runDoctor(ctx context.Context, c *cmdline, stdout io.Writer) error {
	addr := c.String("addr", localapi.DefaultAddr, "the `ADDRESS` alpipe serve would listen on")
	data := c.String("data", cliEnv().DataDir, "the data `FOLDER` alpipe serve would use; ALPIPE_DATA_DIR sets the default")
	if err := c.parse(); err != nil {
		return err
	}
	findings := diagnose(ctx, realHost(), *addr, *data)
	failed := 0
	for _, f := range findings {
		if !f.OK && !f.Optional {
			failed++
		}
	}
	if c.format == "json" {
		if err := render.JSON(stdout, findings); err != nil {
			return err
		}
	} else {
		printFindings(stdout, findings)
	}
	if failed > 0 {
		return fmt.Errorf("doctor: %s missing (each line above says how to fix it)", plural(failed, "required piece", "required pieces"))
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
			mark = "MISS"
			if f.Optional {
				mark = "opt "
			}
		}
		fmt.Fprintf(w, "%s  %-*s  %s\n", mark, width, f.Check, f.Detail)
		if !f.OK {
			fmt.Fprintf(w, "      %-*s  needed for %s; fix: %s\n", width, "", f.Needed, f.Fix)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
