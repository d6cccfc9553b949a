package fakegcs

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteOntoAFolder: compose, copy and rewrite onto a name the folder tree
// cannot hold beside another ("a" and "a/b.csv") answer 409 (uploads:
// TestNamesTheFolderCannotHold).
func TestWriteOntoAFolder(t *testing.T) {
	l, g := startFS(t, t.TempDir())
	put(t, g, "a/b.csv", "inside")
	put(t, g, "src.csv", "x,y\n")
	o := "/storage/v1/b/" + bucket + "/o/"
	tests := []struct {
		name, target, body string
	}{
		{name: "compose onto a folder", target: o + "a/compose", body: `{"sourceObjects":[{"name":"src.csv"}]}`},
		{name: "copy onto a folder", target: o + "src.csv/copyTo/b/" + bucket + "/o/a"},
		{name: "rewrite onto a folder", target: o + "src.csv/rewriteTo/b/" + bucket + "/o/a"},
		{name: "compose below a file", target: o + "src.csv%2Finside.csv/compose", body: `{"sourceObjects":[{"name":"src.csv"}]}`},
		{name: "copy below a file", target: o + "src.csv/copyTo/b/" + bucket + "/o/src.csv%2Finside.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveFake(l, http.MethodPost, tt.target, map[string]string{"Content-Type": "application/json"}, tt.body)
			if rec.Code != http.StatusConflict || !strings.Contains(apiMessage(rec), "folder") {
				t.Errorf("%d %s, want 409 saying why", rec.Code, strings.TrimSpace(rec.Body.String()))
			}
		})
	}
	if got := readAll(t, g, "a/b.csv"); got != "inside" {
		t.Errorf("a/b.csv is now %q", got)
	}
}

// TestStartSweepsInterruptedWrites: objects survive a restart, and Start
// removes the temporary files a write cut by the process's end leaves.
func TestStartSweepsInterruptedWrites(t *testing.T) {
	dir := t.TempDir()
	l, g := startFS(t, dir)
	a := put(t, g, "exportaciones/a.csv", "persisted")
	b := put(t, g, "exportaciones/.b.csv2", "an object whose name looks like a temporary file")
	l.Close()
	stray := filepath.Join(dir, "buckets", bucket, "exportaciones", ".c.csv1234567")
	if err := os.WriteFile(stray, []byte("half a fi"), 0o600); err != nil {
		t.Fatal(err)
	}

	_, g = startFS(t, dir)
	generations := map[string]int64{}
	for o, err := range g.List(t.Context(), bucket, "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		generations[o.Name] = o.Generation
	}
	want := map[string]int64{a.Name: a.Generation, b.Name: b.Generation}
	if diff := cmp.Diff(want, generations); diff != "" {
		t.Errorf("listing: names and generations (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted write's file is still there: %v", err)
	}
	if got := readAll(t, g, a.Name); got != "persisted" {
		t.Errorf("content after restart %q", got)
	}
}
