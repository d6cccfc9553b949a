package fakegcs

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serveFake sends one request to the fake's handler, in process.
func serveFake(l *Server, method, target string, header map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	l.Handler().ServeHTTP(rec, req)
	return rec
}

// apiMessage is the JSON API error message of an answer.
func apiMessage(rec *httptest.ResponseRecorder) string {
	var e struct{ Error struct{ Message string } }
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return e.Error.Message
}

// TestResumableSessionsAreCapped: each resumable session holds an open
// spool file until it ends or idles out for an hour; 1,008 abandoned ones
// exhausted the descriptors, and the next upload failed with a 400. The
// sessions and the bytes they hold are capped, and a refusal is a 429 that
// says why.
func TestResumableSessionsAreCapped(t *testing.T) {
	dir := t.TempDir()
	l, _ := startFS(t, dir)
	l.uploads.maxSessions, l.uploads.maxSessionBytes = 3, 64
	start := func(name string) *httptest.ResponseRecorder {
		return serveFake(l, http.MethodPost, "/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable&name="+name, nil, "{}")
	}
	session := func(t *testing.T, name string) string {
		t.Helper()
		rec := start(name)
		if rec.Code != http.StatusOK {
			t.Fatalf("start %s: %d %s", name, rec.Code, rec.Body)
		}
		u, err := url.Parse(rec.Header().Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		return u.RequestURI()
	}
	chunk := func(loc, contentRange, body string) *httptest.ResponseRecorder {
		return serveFake(l, http.MethodPut, loc, map[string]string{"Content-Range": contentRange, "X-GUploader-No-308": "yes"}, body)
	}

	a, b := session(t, "a.csv"), session(t, "b.csv")
	c := session(t, "c.csv")
	if rec := start("d.csv"); rec.Code != http.StatusTooManyRequests || !strings.Contains(apiMessage(rec), "resumable upload sessions") {
		t.Errorf("a session beyond the cap: %d %s, want 429 saying why", rec.Code, rec.Body)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "uploads")); len(left) != 3 {
		t.Errorf("%d spool files for 3 sessions", len(left))
	}
	// A cancelled session frees its place.
	if rec := serveFake(l, http.MethodDelete, c, nil, ""); rec.Code != 499 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	session(t, "d.csv")

	if rec := chunk(a, "bytes 0-49/*", strings.Repeat("a", 50)); rec.Code != http.StatusOK {
		t.Fatalf("first chunk: %d %s", rec.Code, rec.Body)
	}
	rec := chunk(b, "bytes 0-19/*", strings.Repeat("b", 20))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(apiMessage(rec), "bytes") {
		t.Errorf("a chunk beyond the bytes cap: %d %s, want 429 saying why", rec.Code, rec.Body)
	}
	// The refused chunk left nothing behind: the session has no bytes yet.
	if rec := chunk(b, "bytes */*", ""); rec.Header().Get("Range") != "" {
		t.Errorf("after the refused chunk the session holds %s", rec.Header().Get("Range"))
	}
	// Once a finished upload frees its bytes, the chunk fits.
	if rec := chunk(a, "bytes 50-59/60", strings.Repeat("a", 10)); rec.Code != http.StatusOK || rec.Header().Get("X-Http-Status-Code-Override") != "" {
		t.Fatalf("finalize: %d %s", rec.Code, rec.Body)
	}
	if rec := chunk(b, "bytes 0-19/20", strings.Repeat("b", 20)); rec.Code != http.StatusOK {
		t.Errorf("the chunk after bytes were freed: %d %s", rec.Code, rec.Body)
	}
	// Finished sessions (kept to answer a retried last chunk) hold no file
	// and take no place.
	for _, name := range []string{"e.csv", "f.csv"} {
		session(t, name)
	}
}
