// Package layout checks the repository's promise that internal/ holds only
// what ships: every package there is linked into cmd/server or cmd/alpipe,
// or is the test helper of such a package (its conformance suite or fake,
// kept next to the port it tests). Harnesses live in test/, tools in tools/.
package layout

import (
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/alpinashop/alpipe"

// helperSuffixes name the test-helper packages that may sit under internal/
// without shipping: a port's conformance suite (<port>test) and the fake of
// a service with no local engine (bqfake).
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

func TestInternalHoldsOnlyWhatShips(t *testing.T) {
	linked := map[string]bool{}
	for _, p := range goList(t, "-deps", "./cmd/server", "./cmd/alpipe") {
		linked[p] = true
	}
	var stray []string
	for _, p := range goList(t, "./internal/...") {
		if linked[p] {
			continue
		}
		if isTestHelper(p) && linked[path.Dir(p)] {
			continue
		}
		stray = append(stray, strings.TrimPrefix(p, module+"/"))
	}
	sort.Strings(stray)
	if diff := cmp.Diff([]string(nil), stray); diff != "" {
		t.Errorf("packages under internal/ that neither cmd/server nor cmd/alpipe links (move them to test/ or tools/) (-want +got):\n%s", diff)
	}
}

func TestHelpersAreNotLinked(t *testing.T) {
	var linked []string
	for _, p := range goList(t, "-deps", "./cmd/server", "./cmd/alpipe") {
		if !strings.HasPrefix(p, module+"/") {
			continue
		}
		rel := strings.TrimPrefix(p, module+"/")
		if strings.HasPrefix(rel, "test/") || strings.HasPrefix(rel, "tools/") {
			linked = append(linked, rel)
		}
	}
	if diff := cmp.Diff([]string(nil), linked); diff != "" {
		t.Errorf("the shipped binaries link harness or tool packages (-want +got):\n%s", diff)
	}
}
