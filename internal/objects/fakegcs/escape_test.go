package fakegcs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// FuzzNoPathOut's sandbox has a canary.txt at every level from its root down
// to l1/l2/l3/l4/data, the fake's folder data/gcs, and another bucket's
// secret.csv. Every file outside buckets/landing is sealed.
const (
	canaryBytes = "CANARY-7f3c2a-must-never-be-read-or-changed"
	secretBytes = "SECRET-other-bucket-9d1e"
	fuzzBucket  = "landing"
	otherBucket = "other"
)

type sandbox struct {
	root, gcs string
	h         http.Handler
	sealed    map[string]string
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "l1", "l2", "l3", "l4", "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	for d := data; ; d = filepath.Dir(d) {
		if err := os.WriteFile(filepath.Join(d, "canary.txt"), []byte(canaryBytes), 0o600); err != nil {
			t.Fatal(err)
		}
		if d == root {
			break
		}
	}
	gcs := filepath.Join(data, "gcs")
	l, err := fakegcs.Start(gcs, fuzzBucket, otherBucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	s := &sandbox{root: root, gcs: gcs, h: l.Handler()}
	// A source object for compose, copy and rewrite, and the secret.
	for _, o := range []struct{ bucket, name, body string }{
		{fuzzBucket, "src.csv", "a,b\n1,2\n"},
		{otherBucket, "secret.csv", secretBytes},
	} {
		res := s.do(t, http.MethodPost, "/upload/storage/v1/b/"+o.bucket+"/o?uploadType=media&name="+url.QueryEscape(o.name), o.body)
		if res.Code != http.StatusOK {
			t.Fatalf("seed %s/%s: %d %s", o.bucket, o.name, res.Code, res.Body)
		}
	}
	s.sealed = s.snapshot(t)
	return s
}

// do sends one request straight to the handler, the target as given; one no
// HTTP server would parse is skipped (status 0).
func (s *sandbox) do(t testing.TB, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	u, err := url.ParseRequestURI(target)
	rec := httptest.NewRecorder()
	if err != nil {
		rec.Code = 0
		return rec
	}
	req := &http.Request{
		Method: method, URL: u, RequestURI: target, Host: "127.0.0.1:8080",
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
	req = req.WithContext(t.Context())
	if strings.Contains(target, "uploadType=multipart") {
		req.Header.Set("Content-Type", "multipart/related; boundary=b")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	s.h.ServeHTTP(rec, req)
	return rec
}

// snapshot records every sealed file: its mode, size and content hash.
func (s *sandbox) snapshot(t testing.TB) map[string]string {
	t.Helper()
	open := map[string]bool{filepath.Join(s.gcs, "buckets", fuzzBucket): true}
	out := map[string]string{}
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if open[p] {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:8])
		}
		rel, _ := filepath.Rel(s.root, p)
		out[rel] = fmt.Sprintf("%v %d %s", info.Mode(), info.Size(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// leaked reports a secret found in the landing bucket's files, where a copy
// or rewrite from outside would put it.
func (s *sandbox) leaked(t testing.TB) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(filepath.Join(s.gcs, "buckets", fuzzBucket), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(canaryBytes)) || bytes.Contains(b, []byte(secretBytes)) {
			found = p
		}
		return nil
	})
	return found
}

// reset empties the landing bucket but for the source object, so that every
// input meets the same state and the walks stay short.
func (s *sandbox) reset(t testing.TB) {
	t.Helper()
	dir := filepath.Join(s.gcs, "buckets", fuzzBucket)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "src.csv") {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// request is one route of the fuzz, with the fuzzed name where that route
// takes a name.
type request struct {
	route, method, target, body string
	// checked: the request carries the fuzzed name, as sent, so a name
	// that objname.Local refuses must be refused with 400.
	checked bool
	sent    string // the name as the server reads it
}

func requests(name, bucket string) []request {
	esc := url.PathEscape(name)
	q := url.QueryEscape(name)
	meta, _ := json.Marshal(map[string]string{"name": name})
	sources, _ := json.Marshal(map[string]any{"sourceObjects": []map[string]string{{"name": name}}})
	srcOnly, _ := json.Marshal(map[string]any{"sourceObjects": []map[string]string{{"name": "src.csv"}}})
	o := "/storage/v1/b/" + fuzzBucket + "/o/"
	var out []request
	for _, n := range []struct {
		seg     string
		checked bool
	}{{esc, true}, {name, false}} { // escaped as the library sends it, and raw
		out = append(out,
			request{route: "compose destination", method: "POST", target: o + n.seg + "/compose", body: string(srcOnly), checked: n.checked},
			request{route: "copy destination", method: "POST", target: o + "src.csv/copyTo/b/" + fuzzBucket + "/o/" + n.seg, checked: n.checked},
			request{route: "copy source", method: "POST", target: o + n.seg + "/copyTo/b/" + fuzzBucket + "/o/copied.csv", checked: n.checked},
			request{route: "rewrite destination", method: "POST", target: o + "src.csv/rewriteTo/b/" + fuzzBucket + "/o/" + n.seg, checked: n.checked},
			request{route: "rewrite source", method: "POST", target: o + n.seg + "/rewriteTo/b/" + fuzzBucket + "/o/rewritten.csv", checked: n.checked},
			request{route: "download", method: "GET", target: "/download/storage/v1/b/" + fuzzBucket + "/o/" + n.seg + "?alt=media", checked: n.checked},
			request{route: "media read", method: "GET", target: o + n.seg + "?alt=media", checked: n.checked},
			request{route: "metadata get", method: "GET", target: o + n.seg, checked: n.checked},
			request{route: "metadata patch", method: "PATCH", target: o + n.seg, body: `{"metadata":{"k":"v"}}`, checked: n.checked},
			request{route: "metadata update", method: "PUT", target: o + n.seg, body: `{"metadata":{"k":"v"}}`, checked: n.checked},
			request{route: "delete", method: "DELETE", target: o + n.seg, checked: n.checked},
		)
	}
	for i := range out {
		out[i].sent = name
	}
	// JSON carries only valid UTF-8: an invalid byte arrives as U+FFFD.
	var inJSON string
	_ = json.Unmarshal(meta[len(`{"name":`):len(meta)-1], &inJSON)
	return append(out,
		request{"compose source", "POST", o + "composed.csv/compose", string(sources), true, inJSON},
		request{"upload media", "POST", "/upload/storage/v1/b/" + fuzzBucket + "/o?uploadType=media&name=" + q, "x", true, name},
		request{"upload multipart", "POST", "/upload/storage/v1/b/" + fuzzBucket + "/o?uploadType=multipart",
			"--b\r\nContent-Type: application/json\r\n\r\n" + string(meta) + "\r\n--b\r\nContent-Type: text/csv\r\n\r\nx\r\n--b--\r\n", true, inJSON},
		request{"upload resumable", "POST", "/upload/storage/v1/b/" + fuzzBucket + "/o?uploadType=resumable", string(meta), true, inJSON},
		request{"list prefix", "GET", o[:len(o)-1] + "?prefix=" + q, "", false, name},
		request{"list other bucket", "GET", "/storage/v1/b/" + url.PathEscape(bucket) + "/o", "", false, ""},
		request{"download other bucket", "GET", "/download/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + esc + "?alt=media", "", false, name},
		request{"raw other bucket", "GET", "/storage/v1/b/" + bucket + "/o/" + name + "?alt=media", "", false, name},
	)
}

// traversalSeeds are names an attacker tries first.
var traversalSeeds = []string{
	"..%2F..%2F..%2F..%2Fcanary.txt",
	"../../../../canary.txt",
	"../../../../../../canary.txt",
	"../../../../../../../../../../canary.txt",
	"../../canary.txt",
	"../other/secret.csv",
	"%2e%2e/%2e%2e/%2e%2e/%2e%2e/canary.txt",
	"%252e%252e%252f%252e%252e%252fcanary.txt",
	`..\..\..\..\canary.txt`,
	"..;/..;/canary.txt",
	"....//....//canary.txt",
	"a/../../../../../canary.txt",
	"/l1/l2/canary.txt",
	"./canary.txt",
	"x/./y", "a//b", ".", "..", "", "/", "dir/",
	"canary.txt\x00.csv",
	"a\nb.csv", "a\r\nb.csv", "tab\there",
	"x.metadata",
	"．．/．．/canary.txt",
	"ñandú/../../año.csv",
	"\u202e../canary.txt",
	"..\\\xe1.\\..\\..\\canary.txt", // invalid UTF-8: JSON bodies carry it as U+FFFD
	"\xff/../../canary.txt",
	strings.Repeat("a", 1025),
	strings.Repeat("../", 340) + "canary.txt",
	strings.Repeat("x/", 512),
	"exportaciones/2026/12/01/lineas-pedido-1.csv",
}

// FuzzNoPathOut sends every route a fuzzed object name (escaped and raw)
// and bucket: the sealed files stay unchanged, no answer or landing object
// carries a canary or the secret, and a name objname.Local refuses gets 400.
func FuzzNoPathOut(f *testing.F) {
	for _, n := range traversalSeeds {
		f.Add(n, fuzzBucket)
	}
	for _, b := range []string{"..", "../gcs", "%2e%2e", "other", "Landing", "goog", "."} {
		f.Add("src.csv", b)
	}
	s := newSandbox(f)
	f.Fuzz(func(t *testing.T, name, bucket string) {
		for _, r := range requests(name, bucket) {
			res := s.do(t, r.method, r.target, r.body)
			got := res.Body.String()
			if strings.Contains(got, canaryBytes) {
				t.Fatalf("%s %q: the answer holds a canary from outside the data folder", r.route, name)
			}
			if strings.Contains(got, secretBytes) && bucket != otherBucket {
				t.Fatalf("%s %q (bucket %q): the answer holds the other bucket's object", r.route, name, bucket)
			}
			// GET .../o/ with an empty name is the listing, as in the fake.
			listing := r.sent == "" && r.method == http.MethodGet
			if r.checked && !listing && res.Code != 0 && objname.Local(r.sent) != nil && res.Code != http.StatusBadRequest {
				t.Errorf("%s %q: status %d, want 400 for a name the naming rules refuse (%v)", r.route, r.sent, res.Code, objname.Local(r.sent))
			}
			if h := res.Header(); h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s: CORS header in the answer: %v", r.route, h)
			}
		}
		if diff := cmp.Diff(s.sealed, s.snapshot(t)); diff != "" {
			t.Fatalf("name %q bucket %q changed files outside the landing bucket (-before +after):\n%s", name, bucket, diff)
		}
		if p := s.leaked(t); p != "" {
			t.Fatalf("name %q bucket %q copied a secret into %s", name, bucket, p)
		}
		s.reset(t)
	})
}
