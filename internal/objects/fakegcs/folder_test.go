package fakegcs

import (
	"net/http"
	"strings"
	"testing"
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
