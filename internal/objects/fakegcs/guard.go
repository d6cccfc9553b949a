package fakegcs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// Names are taken from the escaped path exactly as the fake's router does
// (gorilla/mux with UseEncodedPath, then url.PathUnescape per variable), so
// the name checked is the name the fake acts on. An object followed by more
// path (compose, rewriteTo, copyTo) is one escaped segment: a raw "/" there
// would let the fake's greedy patterns split the path differently.

type route struct {
	kind    string // for tests and error messages
	buckets []string
	objects []string
	prefix  []string // listing prefix and offsets
}

// maxComposeBody bounds the JSON body of a compose request: 32 sources with
// names of at most 1024 bytes fit well under it.
const maxComposeBody = 1 << 20

// guard is Handler: only the routes of parseRoute, every name checked once
// where it enters, no Access-Control-* header in the answer; else 404.
func (l *Server) guard(w http.ResponseWriter, r *http.Request) {
	w = &noCORS{ResponseWriter: w}
	if r.Method == http.MethodOptions { // a CORS preflight
		apiError(w, http.StatusMethodNotAllowed, "OPTIONS (cross-origin preflight) is not served by the local storage fake")
		return
	}
	if l.publicHost(r.Host) {
		apiError(w, http.StatusNotFound, "Host "+r.Host+" is not served by the local storage fake")
		return
	}
	// The fake would inflate it without bound; the library compresses only uploads.
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" && !strings.HasPrefix(r.URL.Path, "/upload/") {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("Content-Encoding %q is accepted by the local storage fake on uploads only", ce))
		return
	}
	rt, status, err := l.parseRoute(r)
	if err == nil {
		status, err = l.checkNames(rt)
	}
	if err == nil {
		status, err = l.checkTarget(rt)
	}
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		status, err = http.StatusBadRequest, inflateBody(r) // inflate.go
	}
	if err != nil {
		apiError(w, status, err.Error())
		return
	}
	if rt.kind == "upload" {
		l.upload(w, r, rt.buckets[0]) // uploads.go
		return
	}
	l.fake.HTTPHandler().ServeHTTP(w, r)
}

// parseRoute recognises the routes the client library uses and extracts
// their names; 404 for any other.
func (l *Server) parseRoute(r *http.Request) (route, int, error) {
	notFound := func() (route, int, error) {
		return route{}, http.StatusNotFound, fmt.Errorf("%s %s is not served by the local storage fake", r.Method, r.URL.EscapedPath())
	}
	raw := strings.Split(r.URL.EscapedPath(), "/")
	if len(raw) < 2 || raw[0] != "" {
		return notFound()
	}
	seg := make([]string, len(raw)-1)
	for i, s := range raw[1:] {
		u, err := url.PathUnescape(s)
		if err != nil {
			return route{}, http.StatusBadRequest, fmt.Errorf("path segment %q: %w", s, err)
		}
		seg[i] = u
	}
	is := func(methods ...string) bool { return slices.Contains(methods, r.Method) }
	q := r.URL.Query()
	at := func(prefix ...string) bool {
		if len(seg) < len(prefix) {
			return false
		}
		for i, p := range prefix {
			if p != "*" && seg[i] != p {
				return false
			}
		}
		return true
	}
	switch {
	case at("storage", "v1", "b", "*"):
		b, rest := seg[3], seg[4:]
		switch {
		case len(rest) == 0 && is(http.MethodGet):
			return route{kind: "bucket", buckets: []string{b}}, 0, nil
		case (len(rest) == 1 || len(rest) == 2 && rest[1] == "") && rest[0] == "o" && is(http.MethodGet):
			return route{kind: "list", buckets: []string{b},
				prefix: []string{q.Get("prefix"), q.Get("startOffset"), q.Get("endOffset")}}, 0, nil
		case len(rest) == 2 && rest[0] == "o" && is(http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodPatch, http.MethodPut, http.MethodPost):
			return route{kind: "object", buckets: []string{b}, objects: []string{rest[1]}}, 0, nil
		case len(rest) == 3 && rest[0] == "o" && rest[2] == "compose" && is(http.MethodPost):
			sources, err := composeSources(r)
			if err != nil {
				return route{}, http.StatusBadRequest, err
			}
			return route{kind: "compose", buckets: []string{b}, objects: append([]string{rest[1]}, sources...)}, 0, nil
		case len(rest) == 7 && rest[0] == "o" && (rest[2] == "rewriteTo" || rest[2] == "copyTo") && rest[3] == "b" && rest[5] == "o" && is(http.MethodPost):
			return route{kind: rest[2], buckets: []string{b, rest[4]}, objects: []string{rest[1], rest[6]}}, 0, nil
		}
	case at("upload", "storage", "v1", "b", "*", "o") && (len(seg) == 6 || len(seg) == 7 && seg[6] == "") && is(http.MethodPost, http.MethodPut, http.MethodDelete):
		// A name in the body is checked where the body is read (uploads.go).
		rt := route{kind: "upload", buckets: []string{seg[4]}}
		if q.Has("name") {
			rt.objects = []string{q.Get("name")}
		}
		return rt, 0, nil
	case at("download", "storage", "v1", "b", "*", "o", "*") && is(http.MethodGet, http.MethodHead):
		// The fake's pattern takes the rest of the path, slashes and all.
		name, err := url.PathUnescape(strings.Join(raw[7:], "/"))
		if err != nil {
			return route{}, http.StatusBadRequest, err
		}
		return route{kind: "download", buckets: []string{seg[4]}, objects: []string{name}}, 0, nil
	}
	return notFound()
}

// composeSources reads the compose request's body, as the fake will decode
// it, and returns its source names; the body is put back for the fake.
func composeSources(r *http.Request) ([]string, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxComposeBody+1))
	if err != nil {
		return nil, fmt.Errorf("compose: read request body: %w", err)
	}
	if len(body) > maxComposeBody {
		return nil, fmt.Errorf("compose: request body is larger than %d bytes", maxComposeBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// The fake's own request shape (fakestorage/object.go composeObject).
	var req struct {
		SourceObjects []struct {
			Name string
		}
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		return nil, fmt.Errorf("compose: invalid request body: %w", err)
	}
	names := make([]string, len(req.SourceObjects))
	for i, s := range req.SourceObjects {
		names[i] = s.Name
	}
	return names, nil
}

// checkNames applies Cloud Storage's naming rules and the folder tree's to
// every name of a route; an unknown bucket is 404.
func (l *Server) checkNames(rt route) (int, error) {
	for _, b := range rt.buckets {
		if err := objname.Bucket(b); err != nil {
			return http.StatusBadRequest, err
		}
		if !l.buckets[b] {
			return http.StatusNotFound, fmt.Errorf("bucket %q not found", b)
		}
	}
	for _, o := range rt.objects {
		if err := l.checkObject(o); err != nil {
			return http.StatusBadRequest, err
		}
	}
	for _, p := range rt.prefix {
		if err := objname.Prefix(p); err != nil {
			return http.StatusBadRequest, err
		}
	}
	return 0, nil
}

// checkTarget refuses a compose, copy or rewrite onto a name the folder
// tree cannot hold as a file; uploads are checked in uploads.go.
func (l *Server) checkTarget(rt route) (int, error) {
	var b, o string
	switch rt.kind {
	case "compose":
		b, o = rt.buckets[0], rt.objects[0]
	case "copyTo", "rewriteTo":
		b, o = rt.buckets[1], rt.objects[1]
	default:
		return 0, nil
	}
	if err := l.fileConflict(b, o); err != nil {
		return http.StatusConflict, err
	}
	return 0, nil
}

// publicHost reports whether host is the fake's public host or a bucket
// subdomain, which its router sends to the XML API.
func (l *Server) publicHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == fakePublicHost || strings.HasSuffix(host, "."+fakePublicHost)
}

// fakePublicHost is fakestorage's default PublicHost.
const fakePublicHost = "storage.googleapis.com"

// noCORS drops every Access-Control-* header the fake sets (it allows any
// origin, with credentials) before the header is sent.
type noCORS struct {
	http.ResponseWriter
	wrote bool
}

func (w *noCORS) strip() {
	if w.wrote {
		return
	}
	w.wrote = true
	h := w.ResponseWriter.Header()
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Access-Control-") {
			delete(h, k)
		}
	}
}

func (w *noCORS) WriteHeader(code int) {
	w.strip()
	w.ResponseWriter.WriteHeader(code)
}

func (w *noCORS) Write(b []byte) (int, error) {
	w.strip()
	return w.ResponseWriter.Write(b)
}

// Flush keeps streamed answers streaming.
func (w *noCORS) Flush() {
	w.strip()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *noCORS) Unwrap() http.ResponseWriter { return w.ResponseWriter }
