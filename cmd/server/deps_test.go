package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// thisModule is the module path of this repository, for the internal packages below.
const thisModule = "github.com/alpinashop/alpipe"

// forbiddenDep names what a package path is when the production binary must
// not link it: the fake Cloud Storage and the laptop stack (fakes, the
// embedded DuckDB engine) are for tests and the local CLI. A third-party
// module matches by substring; ours by whole package path (or a package
// below it). internal/localapi is the CLI's contract with serve: production
// wiring names its functions itself.
func forbiddenDep(path string) (string, bool) {
	for _, f := range []string{"fake-gcs-server", "duckdb"} {
		if strings.Contains(path, f) {
			return f, true
		}
	}
	for _, f := range []string{"internal/objects/fakegcs", "internal/local", "internal/localapi", "internal/warehouse/duckdb"} {
		if p := thisModule + "/" + f; path == p || strings.HasPrefix(path, p+"/") {
			return f, true
		}
	}
	return "", false
}

// TestLinksNoFakes lists what the server binary links, as `go list -deps
// ./cmd/server` does, both with the caller's environment and as the image is
// built (CGO_ENABLED=0, which hides files behind cgo build tags), and with
// it cmd/functions, the functions framework's entry, which links what
// Cloud Run functions builds from source (package alpipe at the module
// root). A failure names the packages that import each forbidden one.
func TestLinksNoFakes(t *testing.T) {
	goBin := goCommand(t)
	for _, cgo := range []string{"", "0"} {
		t.Run("CGO_ENABLED="+cgo, func(t *testing.T) {
			cmd := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".", "../functions")
			cmd.Env = os.Environ()
			if cgo != "" {
				cmd.Env = append(cmd.Env, "CGO_ENABLED="+cgo)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, stderr.Bytes())
			}
			importers := map[string][]string{} // package -> packages importing it
			var linked []string
			for line := range strings.Lines(string(out)) {
				fields := strings.Fields(line)
				linked = append(linked, fields[0])
				for _, imp := range fields[1:] {
					importers[imp] = append(importers[imp], fields[0])
				}
			}
			// A list this short would mean go list did not look at the server.
			if len(linked) < 50 {
				t.Fatalf("go list -deps printed only %d packages:\n%s", len(linked), out)
			}
			for _, p := range linked {
				if what, bad := forbiddenDep(p); bad {
					t.Errorf("cmd/server or cmd/functions links %s (%s), imported by %v", p, what, importers[p])
				}
			}
		})
	}
}

// goCommand finds the go command that runs this test: GOROOT/bin/go from `go
// env`, or go on PATH.
func goCommand(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		if testing.Short() {
			t.Skip("go is not on PATH; the dependency check needs it")
		}
		t.Fatalf("go is not on PATH: %v", err)
	}
	if root, err := exec.Command(p, "env", "GOROOT").Output(); err == nil {
		cand := filepath.Join(strings.TrimSpace(string(root)), "bin", "go")
		if _, err := os.Stat(cand); err == nil {
			return cand
		}
	}
	return p
}
