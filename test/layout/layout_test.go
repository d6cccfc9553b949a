// Package layout checks the repository's promise that internal/ holds only
// what ships: every package there is linked into cmd/server or cmd/alpipe,
// or is the test helper of such a package (its conformance suite or fake,
// kept next to the port it tests). Harnesses live in test/, tools in tools/,
// and only internal/config reads the environment.
package layout

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/alpinashop/alpipe"

// isTestHelper names the test-helper packages that may sit under internal/
// without shipping, and are not product code: a port's conformance suite
// (<port>test) and the fake of a service with no local engine (bqfake).
func isTestHelper(pkg string) bool {
	base := path.Base(pkg)
	return strings.HasSuffix(base, "test") || base == "bqfake"
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// TestInternalHoldsOnlyWhatShips also checks the converse: the shipped
// binaries link no harness or tool package.
func TestInternalHoldsOnlyWhatShips(t *testing.T) {
	linked := map[string]bool{}
	var harness []string
	for _, p := range goList(t, "-deps", "./cmd/server", "./cmd/alpipe") {
		linked[p] = true
		rel, ok := strings.CutPrefix(p, module+"/")
		if ok && (strings.HasPrefix(rel, "test/") || strings.HasPrefix(rel, "tools/")) {
			harness = append(harness, rel)
		}
	}
	if diff := cmp.Diff([]string(nil), harness); diff != "" {
		t.Errorf("the shipped binaries link harness or tool packages (-want +got):\n%s", diff)
	}
	var stray []string
	for _, p := range goList(t, "./internal/...") {
		if !linked[p] && !(isTestHelper(p) && linked[path.Dir(p)]) {
			stray = append(stray, strings.TrimPrefix(p, module+"/"))
		}
	}
	slices.Sort(stray)
	if diff := cmp.Diff([]string(nil), stray); diff != "" {
		t.Errorf("packages under internal/ that neither cmd/server nor cmd/alpipe links (move them to test/ or tools/) (-want +got):\n%s", diff)
	}
}

// envReads are the calls that read the process environment.
var envReads = regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Environ)\(`)

// envExempt may touch the environment outside package config, and why:
// the CLI re-executes itself with DuckDB's allocator setting, which DuckDB
// reads only at process start, passing the rest of the environment on.
// doctor inspects the machine as scripts/test.sh and tf-check.sh see it
// (CI, GOPROXY, TF_CHECK_BIN), which are not settings of alpipe's.
var envExempt = map[string]bool{
	"cmd/alpipe/main.go":   true,
	"cmd/alpipe/doctor.go": true,
}

// TestEnvironmentIsReadOnlyByConfig keeps every setting in one typed struct
// of internal/config: a stray os.Getenv is a setting nobody validates or
// documents.
func TestEnvironmentIsReadOnlyByConfig(t *testing.T) {
	var stray []string
	const files = `{{range .GoFiles}}{{$.ImportPath}}/{{.}} {{end}}` +
		`{{range .CgoFiles}}{{$.ImportPath}}/{{.}} {{end}}` +
		`{{range .IgnoredGoFiles}}{{$.ImportPath}}/{{.}} {{end}}` // other platforms' files too
	for _, f := range goList(t, "-f", files, "./cmd/...", "./functions/...", "./internal/...") {
		rel := strings.TrimPrefix(f, module+"/")
		if strings.HasPrefix(rel, "internal/config/") || envExempt[rel] || strings.HasSuffix(rel, "_test.go") ||
			slices.ContainsFunc(strings.Split(path.Dir(rel), "/"), isTestHelper) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			t.Fatal(err)
		}
		if envReads.Match(b) {
			stray = append(stray, rel)
		}
	}
	slices.Sort(stray)
	if diff := cmp.Diff([]string(nil), stray); diff != "" {
		t.Errorf("product files that read the environment outside internal/config (-want +got):\n%s", diff)
	}
}
