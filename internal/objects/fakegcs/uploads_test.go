package fakegcs

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/googleapi"
)

const bucket = "landing"

func startFS(t *testing.T, dir string) (*Server, *objects.GCS) {
	t.Helper()
	l, err := Start(dir, bucket)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(l.Close)
	c, err := l.Client(t.Context())
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	g, _ := objects.NewGCS(c) // c is not nil
	return l, g
}

// backends are the fake's two stores, by the folder startFS is given.
var backends = []struct {
	name string
	dir  func(*testing.T) string
}{{"filesystem", (*testing.T).TempDir}, {"memory", func(*testing.T) string { return "" }}}

func readAll(t *testing.T, g *objects.GCS, name string) string {
	t.Helper()
	r, err := g.Open(t.Context(), bucket, name, 0)
	if err != nil {
		t.Fatalf("Open %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func put(t *testing.T, g *objects.GCS, name, content string) objects.Attrs {
	t.Helper()
	w := g.Create(t.Context(), bucket, name, "text/plain", nil)
	io.WriteString(w, content)
	if err := w.Close(); err != nil {
		t.Fatalf("Create %s: %v", name, err)
	}
	return w.Attrs()
}

func httpStatus(err error) int {
	if ge, ok := errors.AsType[*googleapi.Error](err); ok {
		return ge.Code
	}
	return 0
}

// rawRequest writes an HTTP/1.1 request by hand to the fake's handler on a
// loopback socket (the storage client would never send it) and hangs up
// after body, as a client that dies mid-upload; it returns the status line.
func rawRequest(t *testing.T, l *Server, head string, body string) string {
	t.Helper()
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(srv.Close)
	host := srv.Listener.Addr().String()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "%s\r\nHost: %s\r\n\r\n%s", head, host, body)
	conn.(*net.TCPConn).CloseWrite()
	// Wait for the answer, so the server has finished with the request.
	status, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	return strings.TrimSpace(status)
}

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

// startSession starts a resumable upload of name and returns its session URL.
func startSession(t *testing.T, l *Server, name string) string {
	t.Helper()
	rec := serveFake(l, http.MethodPost, "/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable&name="+name, nil, "{}")
	u, err := url.Parse(rec.Header().Get("Location"))
	if rec.Code != http.StatusOK || err != nil {
		t.Fatalf("start %s: %d %s", name, rec.Code, rec.Body)
	}
	return u.RequestURI()
}

// chunk sends one request of a resumable session, as the client library does.
func chunk(l *Server, method, loc, contentRange, body string) *httptest.ResponseRecorder {
	header := map[string]string{"Content-Range": contentRange, "X-GUploader-No-308": "yes"}
	return serveFake(l, method, loc, header, body)
}

// apiMessage is the JSON API error message of an answer.
func apiMessage(rec *httptest.ResponseRecorder) string {
	var e struct{ Error struct{ Message string } }
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return e.Error.Message
}

func TestResumableSessionProtocol(t *testing.T) {
	l, g := startFS(t, t.TempDir())
	incomplete := func(rec *httptest.ResponseRecorder, wantRange string) {
		t.Helper()
		got := fmt.Sprintf("%d %s %s", rec.Code, rec.Header().Get("X-Http-Status-Code-Override"), rec.Header().Get("Range"))
		if want := "200 308 " + wantRange; got != want {
			t.Fatalf("response %q (%s), want %q", got, rec.Body, want)
		}
	}

	res := chunk(l, "POST", "/upload/storage/v1/b/landing/o?uploadType=resumable",
		"", `{"name":"exportaciones/x.csv","contentType":"text/csv","metadata":{"feed":"lineas"}}`)
	u, err := url.Parse(res.Header().Get("Location"))
	if res.Code != 200 || err != nil || u.RawQuery == "" {
		t.Fatalf("start: %d, Location %q", res.Code, res.Header().Get("Location"))
	}
	loc := u.RequestURI()

	incomplete(chunk(l, "POST", loc, "bytes 0-9/*", "0123456789"), "bytes=0-9")
	// The response was lost and the client re-sends the same range.
	incomplete(chunk(l, "POST", loc, "bytes 0-9/*", "0123456789"), "bytes=0-9")
	// A body shorter than its range is refused and leaves nothing behind.
	if res := chunk(l, "POST", loc, "bytes 10-19/*", "abcde"); res.Code != 400 {
		t.Fatalf("short chunk: status %d, want 400", res.Code)
	}
	// A client that hangs up mid-chunk leaves nothing behind either.
	if got := rawRequest(t, l, "POST "+loc+" HTTP/1.1\r\nContent-Range: bytes 10-19/*\r\nContent-Length: 10", "abc"); got != "HTTP/1.1 400 Bad Request" {
		t.Fatalf("chunk cut by a hang-up answered %q, want a 400", got)
	}
	incomplete(chunk(l, "PUT", loc, "bytes */*", ""), "bytes=0-9")
	if _, err := g.Stat(t.Context(), bucket, "exportaciones/x.csv"); !errors.Is(err, objects.ErrNotFound) {
		t.Fatalf("Stat before finalize = %v, want ErrNotFound", err)
	}

	final := chunk(l, "POST", loc, "bytes 10-19/20", "abcdefghij")
	body := final.Body.Bytes()
	if final.Code != 200 {
		t.Fatalf("finalize: %d %s", final.Code, body)
	}
	var obj struct{ Generation, Size string } // the object resource, in JSON
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	a, err := g.Stat(t.Context(), bucket, "exportaciones/x.csv")
	if err != nil {
		t.Fatal(err)
	}
	const content = "0123456789abcdefghij"
	sum := md5.Sum([]byte(content))
	wantAttrs := objects.Attrs{Bucket: bucket, Name: "exportaciones/x.csv", Generation: a.Generation, Size: 20,
		MD5: base64.StdEncoding.EncodeToString(sum[:]), CRC32C: a.CRC32C, Metadata: map[string]string{"feed": "lineas"},
		Created: a.Created}
	got := []any{readAll(t, g, "exportaciones/x.csv"), a, obj.Generation, obj.Size}
	if diff := cmp.Diff([]any{content, wantAttrs, fmt.Sprint(a.Generation), "20"}, got); diff != "" {
		t.Errorf("content, Stat, the finalize's generation and size (-want +got):\n%s", diff)
	}
	// A retried finalize gets the same answer, not a new generation.
	again := chunk(l, "POST", loc, "bytes 10-19/20", "abcdefghij")
	if again.Code != 200 || !bytes.Equal(body, again.Body.Bytes()) {
		t.Errorf("retried finalize: %d %s, want the first answer", again.Code, again.Body)
	}
}

// TestCutMultipartStoresNothing: a multipart upload whose body did not end
// stores nothing, whether cut before its closing boundary or after it (an
// aborted single-shot upload: gcsWriter.Abort). Ended, the same request is
// stored.
func TestCutMultipartStoresNothing(t *testing.T) {
	chunked := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	const (
		head  = "POST /upload/storage/v1/b/landing/o?uploadType=multipart HTTP/1.1\r\nContent-Type: multipart/related; boundary=b\r\n"
		meta  = "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"cut.csv\"}\r\n"
		media = "--b\r\nContent-Type: text/csv\r\n\r\nhalf a fi"
	)
	for _, tc := range []struct{ name, head, body, end string }{
		{"before its closing boundary", head + "Content-Length: 1000", meta + media, ""},
		{"after its closing boundary", head + "Transfer-Encoding: chunked",
			chunked(meta) + chunked(media) + chunked("\r\n--b--\r\n"), "0\r\n\r\n"},
	} {
		for _, backend := range backends {
			t.Run(tc.name+"/"+backend.name, func(t *testing.T) {
				l, g := startFS(t, backend.dir(t))
				if got := rawRequest(t, l, tc.head, tc.body); got != "HTTP/1.1 400 Bad Request" {
					t.Errorf("cut multipart upload answered %q, want a 400", got)
				}
				if _, err := g.Stat(t.Context(), bucket, "cut.csv"); !errors.Is(err, objects.ErrNotFound) {
					t.Errorf("Stat = %v, want ErrNotFound", err)
				}
				if tc.end == "" {
					return
				}
				if got := rawRequest(t, l, tc.head, tc.body+tc.end); got != "HTTP/1.1 200 OK" {
					t.Fatalf("the same upload with its body ended answered %q, want 200", got)
				}
				if got := readAll(t, g, "cut.csv"); got != "half a fi" {
					t.Errorf("content %q, want %q", got, "half a fi")
				}
			})
		}
	}
}

func TestUploadPreconditionsAndChecksums(t *testing.T) {
	l, g := startFS(t, t.TempDir())
	first := put(t, g, "once.csv", "first")
	// The library's writer directly: the adapter exposes neither
	// preconditions nor declared checksums.
	c, err := l.Client(t.Context())
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	obj := c.Bucket(bucket).Object("once.csv")

	stale, none := storage.Conditions{GenerationMatch: first.Generation - 1}, storage.Conditions{}
	for _, tc := range []struct {
		name       string
		cond       storage.Conditions
		crc, md5   bool
		chunk      int // 0: one chunk (the default of 16 MiB)
		wantStatus int
	}{
		{"does not exist, but it does", storage.Conditions{DoesNotExist: true}, false, false, 0, 412},
		{"generation match, stale", stale, false, false, 0, 412},
		{"wrong CRC32C declared", none, true, false, 0, 400},
		{"wrong MD5 declared", none, false, true, 0, 400},
		// The fake forgets declared checksums after a session's first chunk.
		{"wrong CRC32C declared, several chunks", none, true, false, 256 << 10, 400},
		{"stale generation, several chunks", stale, false, false, 256 << 10, 412},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := obj
			if tc.cond != none {
				o = obj.If(tc.cond)
			}
			w := o.NewWriter(t.Context())
			if tc.chunk > 0 {
				w.ChunkSize = tc.chunk
			}
			if tc.crc {
				w.SendCRC32C, w.CRC32C = true, 12345
			}
			if tc.md5 {
				w.MD5 = []byte("0123456789abcdef")
			}
			io.WriteString(w, strings.Repeat("second\n", 100<<10))
			err := w.Close()
			if got := httpStatus(err); got != tc.wantStatus {
				t.Errorf("Close = %v (status %d), want status %d", err, got, tc.wantStatus)
			}
			if got := readAll(t, g, "once.csv"); got != "first" {
				t.Errorf("content %q, want first", got)
			}
		})
	}

	w := obj.If(storage.Conditions{GenerationMatch: first.Generation}).NewWriter(t.Context())
	io.WriteString(w, "second")
	if err := w.Close(); err != nil {
		t.Fatalf("Close with the right generation: %v", err)
	}
	if got := readAll(t, g, "once.csv"); got != "second" {
		t.Errorf("content %q, want second", got)
	}
}

// TestNamesTheFolderCannotHold: names that would leave the bucket folder
// are FuzzNoPathOut's seeds.
func TestNamesTheFolderCannotHold(t *testing.T) {
	_, g := startFS(t, t.TempDir())
	put(t, g, "a.csv", "file")
	for _, tc := range []struct {
		name       string
		wantStatus int
	}{
		{"a.csv/inside.csv", 409},                                    // a.csv is a file, so it cannot be a folder too
		{strings.Repeat("q", objname.MaxSegmentBytes) + "/x.csv", 0}, // stored
		{strings.Repeat("q", objname.MaxSegmentBytes+1) + "/x.csv", 400},
		{"x/" + strings.Repeat("q", objname.MaxSegmentBytes-4) + ".csv", 0},
		{"x/" + strings.Repeat("q", objname.MaxSegmentBytes-3) + ".csv", 400},
		{"x.metadata", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := g.Create(t.Context(), bucket, tc.name, "text/plain", nil)
			io.WriteString(w, "x")
			err := w.Close()
			if got := httpStatus(err); got != tc.wantStatus {
				t.Errorf("Close = %v (status %d), want status %d", err, got, tc.wantStatus)
			}
		})
	}
}

func TestMissingBucket(t *testing.T) {
	_, g := startFS(t, t.TempDir())
	w := g.Create(t.Context(), "nope", "x.csv", "text/plain", nil)
	io.WriteString(w, "x")
	if err := w.Close(); httpStatus(err) != 404 {
		t.Errorf("Create in a missing bucket: Close = %v, want a 404", err)
	}
	var errs []error
	for _, err := range g.List(t.Context(), "nope", "") {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], storage.ErrBucketNotExist) || errors.Is(errs[0], objects.ErrNotFound) {
		t.Errorf("List of a missing bucket yielded %v, want one storage.ErrBucketNotExist that is not ErrNotFound", errs)
	}
}

// TestResumableSessionsAreCapped: sessions and the bytes they hold are
// capped, and a refusal is a 429 that says why.
func TestResumableSessionsAreCapped(t *testing.T) {
	l, _ := startFS(t, t.TempDir())
	l.sessions.maxOpen, l.sessions.maxHeld = 3, 64

	a, b := startSession(t, l, "a.csv"), startSession(t, l, "b.csv")
	c := startSession(t, l, "c.csv")
	target := "/upload/storage/v1/b/" + bucket + "/o?uploadType=resumable&name=d.csv"
	rec := serveFake(l, http.MethodPost, target, nil, "{}")
	if rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(apiMessage(rec), "resumable upload sessions") {
		t.Errorf("a session beyond the cap: %d %s, want 429 saying why", rec.Code, rec.Body)
	}
	// A cancelled session frees its place.
	if rec := serveFake(l, http.MethodDelete, c, nil, ""); rec.Code != 499 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	startSession(t, l, "d.csv")

	if rec := chunk(l, "PUT", a, "bytes 0-49/*", strings.Repeat("a", 50)); rec.Code != http.StatusOK {
		t.Fatalf("first chunk: %d %s", rec.Code, rec.Body)
	}
	rec = chunk(l, "PUT", b, "bytes 0-19/*", strings.Repeat("b", 20))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(apiMessage(rec), "bytes") {
		t.Errorf("a chunk beyond the bytes cap: %d %s, want 429 saying why", rec.Code, rec.Body)
	}
	// The refused chunk left nothing behind: the session has no bytes yet.
	if rec := chunk(l, "PUT", b, "bytes */*", ""); rec.Header().Get("Range") != "" {
		t.Errorf("after the refused chunk the session holds %s", rec.Header().Get("Range"))
	}
	// Once a finished upload frees its bytes, the chunk fits.
	rec = chunk(l, "PUT", a, "bytes 50-59/60", strings.Repeat("a", 10))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Http-Status-Code-Override") != "" {
		t.Fatalf("finalize: %d %s", rec.Code, rec.Body)
	}
	if rec := chunk(l, "PUT", b, "bytes 0-19/20", strings.Repeat("b", 20)); rec.Code != http.StatusOK {
		t.Errorf("the chunk after bytes were freed: %d %s", rec.Code, rec.Body)
	}
	// Finished sessions (kept to answer a retried last chunk) hold no bytes
	// and take no place.
	startSession(t, l, "e.csv")
	startSession(t, l, "f.csv")
}

// TestUploadBodyNames: a body that names another bucket, another object
// than the URL, or a name the rules refuse is refused, on both backends.
func TestUploadBodyNames(t *testing.T) {
	multipart := func(name string) string {
		return "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":" + strconv.Quote(name) +
			"}\r\n--b\r\nContent-Type: text/csv\r\n\r\nx\r\n--b--\r\n"
	}
	for _, dir := range []string{t.TempDir(), ""} {
		l, err := Start(dir, bucket, "other")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		for _, tc := range []struct {
			name, query, body string
			wantStatus        int
		}{
			{"the URL's bucket", "", `{"bucket":"landing","name":"x.csv"}`, 200},
			{"another bucket", "", `{"bucket":"other","name":"x.csv"}`, 400},
			{"the parent folder as bucket", "", `{"bucket":"..","name":"buckets/other/x.csv"}`, 400},
			{"two names", "&name=x.csv", `{"name":"../y.csv"}`, 400},
			{"the same name twice", "&name=x.csv", `{"name":"x.csv"}`, 200},
			{"not JSON", "", `{"name":`, 400},
			{"a CR", "", `{"name":"a\rb.csv"}`, 400},
			{"multipart", "multipart", multipart("m.csv"), 200},
			{"multipart with a newline", "multipart", multipart("a\nb.csv"), 400},
			{"multipart with a parent segment", "multipart", multipart("../x.csv"), 400},
		} {
			t.Run(fmt.Sprintf("dir=%t/%s", dir != "", tc.name), func(t *testing.T) {
				target, ct := "/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable"+tc.query, "application/json"
				if tc.query == "multipart" {
					target, ct = "/upload/storage/v1/b/"+bucket+"/o?uploadType=multipart", "multipart/related; boundary=b"
				}
				rec := serveFake(l, http.MethodPost, target, map[string]string{"Content-Type": ct}, tc.body)
				if rec.Code != tc.wantStatus {
					t.Errorf("status %d (%s), want %d", rec.Code, rec.Body, tc.wantStatus)
				}
			})
		}
	}
}

// zeros yields zero bytes without end, and without allocating.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestUploadsAreBounded: the fake reads an upload whole into memory, so an
// upload beyond maxObjectBytes is refused with 413 and stores nothing.
func TestUploadsAreBounded(t *testing.T) {
	l, g := startFS(t, t.TempDir())
	for _, tc := range []struct{ name, method, target, contentRange string }{
		{"media", http.MethodPost, "/upload/storage/v1/b/landing/o?uploadType=media&name=big.csv", ""},
		{"resumable chunk", http.MethodPut, "", fmt.Sprintf("bytes 0-%d/*", maxObjectBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = startSession(t, l, "big.csv")
			}
			req := httptest.NewRequest(tc.method, target, io.LimitReader(zeros{}, maxObjectBytes+1))
			req.Header.Set("Content-Range", tc.contentRange)
			rec := httptest.NewRecorder()
			l.Handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d (%.200s), want 413", rec.Code, rec.Body)
			}
			if _, err := g.Stat(t.Context(), bucket, "big.csv"); !errors.Is(err, objects.ErrNotFound) {
				t.Errorf("Stat = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestResumableNameWithQueryCharacters: "&" and "+" in a name survive the
// session URL's query.
func TestResumableNameWithQueryCharacters(t *testing.T) {
	_, g := startFS(t, t.TempDir())
	const name = "exportaciones/a&upload_id=x+y.csv"
	content := strings.Repeat("P-1,ES\n", 100<<10)
	w := g.WithChunkSize(256<<10).Create(t.Context(), bucket, name, "text/csv", nil)
	io.WriteString(w, content)
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := readAll(t, g, name); got != content {
		t.Errorf("read back %d bytes, want %d", len(got), len(content))
	}
}
