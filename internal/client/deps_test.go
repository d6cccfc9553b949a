package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoServer keeps the client light (and the contract, the renderer
// and the ops packages it runs): a client command must not link
// the local server, the composition root or DuckDB (minutes of cgo build,
// and a second process must never open the server's files).
func TestLinksNoServer(t *testing.T) {
	for _, pkg := range []string{"../client", "../localapi", "../render", "../reingest", "../status"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range []string{
				"github.com/alpinashop/alpipe/internal/local",
				"github.com/alpinashop/alpipe/internal/setup",
				"github.com/alpinashop/alpipe/internal/warehouse/duckdb",
				"github.com/marcboeker/go-duckdb",
				"github.com/duckdb/duckdb-go",
				"github.com/duckdb/duckdb-go-bindings",
			} {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
