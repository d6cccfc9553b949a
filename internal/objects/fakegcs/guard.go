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

// Server does not expose the fake's router (see the package comment):
// guard lets through only the routes below, checks every bucket and object
// name they carry once, here, where they enter, and strips every
// Access-Control-Allow-* header from the answer. Anything else is 404.
//
// Names in the path are taken from the escaped path exactly as the fake's
// router does (gorilla/mux with UseEncodedPath, then url.PathUnescape per
// variable), so the name checked is the name the fake acts on. A route whose
// object is followed by more path (compose, rewriteTo, copyTo) takes the
// object as one escaped segment, as the client library sends it; a raw "/"
// there would let the fake's greedy patterns split the path differently.

// route is one request the guard lets through.
type route struct {
	kind    string // for tests and error messages
	buckets []string
	objects []string
	prefix  []string // listing prefix and offsets
}

// maxComposeBody bounds the JSON body of a compose request: 32 sources with
// names of at most 1024 bytes fit well under it.
const maxComposeBody = 1 << 20

// guard is Handler: the only way into the fake.
func (l *Server) guard(w http.ResponseWriter, r *http.Request) {
	w = &noCORS{ResponseWriter: w}
	if r.Method == http.MethodOptions {
		// A CORS preflight: no Access-Control-Allow-* in the answer, so a
		// browser sends nothing after it.
		apiError(w, http.StatusMethodNotAllowed, "OPTIONS (cross-origin preflight) is not served by the local storage fake")
		return
	}
	if l.publicHost(r.Host) {
		// The fake routes Host: <bucket>.storage.googleapis.com to its XML
		// API, with the bucket taken from the Host header.
		apiError(w, http.StatusNotFound, "Host "+r.Host+" is not served by the local storage fake")
		return
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		if !strings.HasPrefix(r.URL.Path, "/upload/") {
			// The fake would inflate it without bound, and the client
			// library compresses no other request.
			apiError(w, http.StatusBadRequest, fmt.Sprintf("Content-Encoding %q is accepted by the local storage fake on uploads only", ce))
			return
		}
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
// their names. It answers 404 for any other path or method.
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

// checkNames applies the naming rules to every name of a route: Cloud
// Storage's, plus what the folder tree can hold. Buckets must also be ones
// the fake was started with (404 otherwise, as for a missing bucket).
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
// tree cannot hold as a file (fileConflict). Uploads meet the same check
// where their name is known (uploads.go).
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

// publicHost reports whether host is the fake's public host or one of its
// bucket subdomains, which its router sends to other handlers.
func (l *Server) publicHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == fakePublicHost || strings.HasSuffix(host, "."+fakePublicHost)
}

// fakePublicHost is fakestorage's default PublicHost.
const fakePublicHost = "storage.googleapis.com"

// noCORS drops every Access-Control-* header the fake sets (its CORS
// middleware allows any origin with credentials, and its downloads add
// Access-Control-Allow-Origin: *) before the header is sent.
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
