package fakegcs_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

// TestGuard: only the client library's routes reach the fake, every name is
// checked where it enters, and no answer carries a CORS header.
func TestGuard(t *testing.T) {
	const b = "alpinashop-catalogo"
	l, err := fakegcs.Start(t.TempDir(), b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	o := "/storage/v1/b/" + b + "/o"
	for _, tc := range []struct {
		name, method, target, body string
		header                     map[string]string
		wantStatus                 int
		wantMessage                string // substring of the JSON API error message
	}{
		{name: "upload", method: "POST", target: "/upload/storage/v1/b/" + b + "/o?uploadType=media&name=x.csv", body: "a,b\n", wantStatus: 200},
		{name: "list", method: "GET", target: o, wantStatus: 200},
		{name: "list with an origin gets no CORS headers", method: "GET", target: o, header: map[string]string{"Origin": "http://127.0.0.1:9999"}, wantStatus: 200},
		{name: "download", method: "GET", target: "/download/storage/v1/b/" + b + "/o/x.csv?alt=media", header: map[string]string{"Origin": "http://evil.example"}, wantStatus: 200},
		{name: "the issue's compose attack", method: "POST", target: o + "/..%2F..%2F..%2F..%2Fcanary.txt/compose",
			body: `{"sourceObjects":[{"name":"x.csv"}]}`, wantStatus: 400, wantMessage: "empty, . or .. segment"},
		{name: "compose source escaping", method: "POST", target: o + "/y.csv/compose",
			body: `{"sourceObjects":[{"name":"x.csv"},{"NAME":"../../z"}]}`, wantStatus: 400, wantMessage: `"../../z" has an empty, . or .. segment`},
		{name: "compose body compressed", method: "POST", target: o + "/y.csv/compose", body: "\x1f\x8b",
			header: map[string]string{"Content-Encoding": "gzip"}, wantStatus: 400, wantMessage: "Content-Encoding"},
		{name: "compose body too large", method: "POST", target: o + "/y.csv/compose", body: strings.Repeat(" ", 1<<20+1), wantStatus: 400, wantMessage: "larger than"},
		{name: "compose body not JSON", method: "POST", target: o + "/y.csv/compose", body: "{", wantStatus: 400, wantMessage: "invalid request body"},
		{name: "copy to another bucket's folder", method: "POST", target: o + "/x.csv/copyTo/b/" + b + "/o/..%2Falpinashop-cuarentena%2Fx", wantStatus: 400, wantMessage: ".. segment"},
		{name: "rewrite from outside", method: "POST", target: o + "/%2e%2e%2f%2e%2e%2fsecret/rewriteTo/b/" + b + "/o/y", wantStatus: 400, wantMessage: ".. segment"},
		{name: "newline in a name", method: "GET", target: o + "/a%0Ab.csv", wantStatus: 400, wantMessage: "U+000A"},
		{name: "upload name with NUL", method: "POST", target: "/upload/storage/v1/b/" + b + "/o?uploadType=media&name=a%00b", body: "x", wantStatus: 400, wantMessage: "U+0000"},
		{name: "list prefix with CR", method: "GET", target: o + "?prefix=a%0D", wantStatus: 400, wantMessage: "U+000D"},
		{name: "bucket outside the rules", method: "GET", target: "/storage/v1/b/..%2Fgcs/o", wantStatus: 400, wantMessage: "bucket name"},
		{name: "bucket not served", method: "GET", target: "/storage/v1/b/alpinashop-cuarentena/o", wantStatus: 404, wantMessage: "not found"},
		{name: "internal delete_all", method: "POST", target: "/_internal/delete_all", wantStatus: 404},
		{name: "internal reseed", method: "PUT", target: "/_internal/reseed", wantStatus: 404},
		{name: "internal config", method: "PUT", target: "/_internal/config", body: "{}", wantStatus: 404},
		{name: "internal healthcheck", method: "GET", target: "/_internal/healthcheck", wantStatus: 404},
		{name: "batch", method: "POST", target: "/batch/storage/v1", wantStatus: 404},
		{name: "bucket creation", method: "POST", target: "/storage/v1/b", body: `{"name":"new-bucket"}`, wantStatus: 404},
		{name: "object ACL", method: "GET", target: o + "/x.csv/acl", wantStatus: 404},
		{name: "notifications", method: "GET", target: "/storage/v1/b/" + b + "/notificationConfigs", wantStatus: 404},
		{name: "XML API by path", method: "GET", target: "/" + b + "/x.csv", wantStatus: 404},
		{name: "XML API by Host", method: "GET", target: "/download/storage/v1/b/" + b + "/o/x.csv",
			header: map[string]string{"Host": b + ".storage.googleapis.com"}, wantStatus: 404},
		{name: "preflight", method: "OPTIONS", target: o, header: map[string]string{
			"Origin": "http://evil.example", "Access-Control-Request-Method": "DELETE"}, wantStatus: 405},
		{name: "delete", method: "DELETE", target: o + "/x.csv", header: map[string]string{"Origin": "http://evil.example"}, wantStatus: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if h, ok := tc.header["Host"]; ok {
				req.Host = h
			}
			rec := httptest.NewRecorder()
			l.Handler().ServeHTTP(rec, req)
			var cors []string
			for k := range rec.Header() {
				if strings.HasPrefix(k, "Access-Control-") {
					cors = append(cors, k)
				}
			}
			if diff := cmp.Diff([]string(nil), cors); diff != "" {
				t.Errorf("CORS headers (-want +got):\n%s", diff)
			}
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.wantStatus)
			}
			if tc.wantMessage == "" {
				return
			}
			var e struct {
				Error struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != tc.wantStatus || !strings.Contains(e.Error.Message, tc.wantMessage) {
				t.Errorf("answer %s (%v), want a JSON API error %d naming %q", rec.Body, err, tc.wantStatus, tc.wantMessage)
			}
		})
	}
}

// TestStartDoesNotListen: the fake opens no socket of its own; the storage
// client reaches it in process, even when the environment points the
// library at another emulator.
func TestStartDoesNotListen(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1")
	before := listeningSockets(t)
	_, g := objectstest.Fake(t, t.TempDir(), "landing")
	w := g.Create(t.Context(), "landing", "x.csv", "text/csv", nil)
	if _, err := w.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := g.Stat(t.Context(), "landing", "x.csv"); err != nil {
		t.Errorf("Stat: %v", err)
	}
	if diff := cmp.Diff(before, listeningSockets(t)); diff != "" {
		t.Errorf("listening sockets of this process (-before +after):\n%s", diff)
	}
}

// listeningSockets lists the TCP sockets this process listens on (Linux:
// its socket file descriptors matched against /proc/net/tcp{,6}).
func listeningSockets(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			mine[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "0A" && mine[f[9]] { // 0A: LISTEN
				out = append(out, f[1])
			}
		}
	}
	slices.Sort(out)
	return out
}
