package fakegcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Each upload body is read to its end, within maxObjectBytes, before the
// fake sees it: a body that did not end (a client that died, or aborted
// after the multipart closing boundary) stores nothing (400), as on Cloud
// Storage. The chunks of a resumable session are held here, applied whole
// or not at all, and handed to the fake as one chunk at the end; sessions
// are bounded in number and bytes (429 saying why) and end sessionTTL after
// their last request (an abandoned one never says so).
const (
	maxObjectBytes      = 64 << 20 // the 50 MiB conformance object and the 46 MB capacity drop fit
	defaultMaxSessions  = 64
	defaultMaxHeldBytes = 4 * maxObjectBytes
	sessionTTL          = time.Hour
)

type sessions struct {
	mu      sync.Mutex
	byID    map[string]*session // the fake's upload_id
	open    int                 // sessions not finished, cancelled or expired
	held    int64               // bytes their chunks hold
	maxOpen int
	maxHeld int64
}

type session struct {
	mu           sync.Mutex
	bucket, name string
	chunks       [][]byte
	size         int64
	touched      time.Time
	ended        bool
	done         *httptest.ResponseRecorder // the fake's answer to the finalize, for a retry
}

func (l *Server) upload(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		l.chunk(w, r, bucket, id)
		return
	}
	uploadType := q.Get("uploadType")
	if r.Method != http.MethodPost || uploadType != "media" && uploadType != "multipart" && uploadType != "resumable" {
		apiError(w, http.StatusBadRequest, "uploads start with POST and uploadType media, multipart or resumable")
		return
	}
	body, err := readBody(r)
	if err != nil {
		apiError(w, receiveStatus(err), "upload: "+err.Error())
		return
	}
	name, status, err := l.uploadName(r, bucket, body)
	if err != nil {
		apiError(w, status, err.Error())
		return
	}
	if uploadType != "resumable" {
		l.fake.HTTPHandler().ServeHTTP(w, r)
		return
	}
	l.start(w, r, bucket, name)
}

// readBody reads a body to its end, within maxObjectBytes, and puts it back.
func readBody(r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= maxObjectBytes {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // one allocation
	}
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, maxObjectBytes+1)); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	b := buf.Bytes()
	if len(b) > maxObjectBytes {
		return nil, &statusError{http.StatusRequestEntityTooLarge, fmt.Errorf(
			"more than %d MiB: the local storage fake holds an upload in memory and refuses a larger one", maxObjectBytes>>20)}
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return b, nil
}

// uploadName returns the object an upload names, checked. The fake takes
// the name from the query, else the body, and a bucket named in a resumable
// start's body wins over the URL's: a body naming another is refused.
func (l *Server) uploadName(r *http.Request, bucket string, body []byte) (string, int, error) {
	q := r.URL.Query()
	var meta struct{ Name, Bucket string }
	var err error
	switch q.Get("uploadType") {
	case "multipart":
		var params map[string]string
		var part *multipart.Part
		if _, params, err = mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil {
			if part, err = multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart(); err == nil {
				err = json.NewDecoder(part).Decode(&meta)
			}
		}
	case "resumable":
		if len(bytes.TrimSpace(body)) > 0 {
			err = json.Unmarshal(body, &meta)
		}
	}
	name := q.Get("name")
	switch {
	case err != nil:
		return "", http.StatusBadRequest, fmt.Errorf("upload: unreadable object metadata: %w", err)
	case meta.Bucket != "" && meta.Bucket != bucket:
		return "", http.StatusBadRequest, fmt.Errorf("upload to bucket %q names bucket %q in its body", bucket, meta.Bucket)
	case name != "" && meta.Name != "" && meta.Name != name:
		return "", http.StatusBadRequest, fmt.Errorf("upload names object %q in its URL and %q in its body", name, meta.Name)
	case name == "":
		name = meta.Name
	}
	if err := l.checkObject(name); err != nil {
		return "", http.StatusBadRequest, err
	}
	if err := l.fileConflict(bucket, name); err != nil {
		return "", http.StatusConflict, err
	}
	return name, 0, nil
}

// start lets the fake open a session and hands out a session URL of our own:
// the fake's path-escapes the name into the query, where "&" or "+" breaks it.
func (l *Server) start(w http.ResponseWriter, r *http.Request, bucket, name string) {
	ss := &l.sessions
	ss.mu.Lock()
	ss.sweepLocked(time.Now())
	if ss.open >= ss.maxOpen {
		ss.mu.Unlock()
		apiError(w, http.StatusTooManyRequests, fmt.Sprintf(
			"%d resumable upload sessions are in progress, the local storage fake's limit: finish or cancel one (an abandoned session ends %.0f min after its last request)",
			ss.maxOpen, sessionTTL.Minutes()))
		return
	}
	ss.open++ // given back below if the fake refuses
	ss.mu.Unlock()

	rec := httptest.NewRecorder()
	l.fake.HTTPHandler().ServeHTTP(rec, r)
	loc := rec.Header().Get("Location")
	base, _, _ := strings.Cut(loc, "/upload/")
	var id string
	if u, err := url.Parse(loc); err == nil {
		if ids := u.Query()["upload_id"]; len(ids) > 0 {
			id = ids[len(ids)-1] // the fake's own, after the name
		}
	}
	ss.mu.Lock()
	if rec.Code == http.StatusOK && id != "" {
		ss.byID[id] = &session{bucket: bucket, name: name, touched: time.Now()}
		rec.Header().Set("Location", base+"/upload/storage/v1/b/"+url.PathEscape(bucket)+"/o?"+url.Values{
			"uploadType": {"resumable"}, "name": {name}, "upload_id": {id}}.Encode())
		rec.Header().Del("X-Goog-Upload-URL")
	} else {
		ss.open--
	}
	ss.mu.Unlock()
	replay(w, rec)
}

// chunk applies one request of a resumable session, whole or not at all.
func (l *Server) chunk(w http.ResponseWriter, r *http.Request, bucket, id string) {
	ss := &l.sessions
	ss.mu.Lock()
	s := ss.byID[id]
	ss.mu.Unlock()
	if s == nil || s.bucket != bucket {
		apiError(w, http.StatusNotFound, "no such upload session")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touched = time.Now()
	switch {
	case r.Method == http.MethodDelete:
		ss.end(id, s, false)
		w.WriteHeader(499) // what Cloud Storage answers to a cancelled session
		return
	case s.done != nil: // the client did not get the finalize's answer
		_, _ = io.Copy(io.Discard, r.Body)
		replay(w, s.done)
		return
	case s.ended:
		apiError(w, http.StatusNotFound, "upload session has ended")
		return
	}
	cr, err := parseContentRange(r.Header.Get("Content-Range"))
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	body, err := readBody(r)
	if err != nil {
		apiError(w, receiveStatus(err), "chunk: "+err.Error())
		return
	}
	if cr.hasRange {
		switch {
		case cr.start > s.size:
			apiError(w, http.StatusBadRequest, fmt.Sprintf("chunk starts at byte %d but only %d bytes were received", cr.start, s.size))
			return
		case cr.start+int64(len(body)) != cr.end+1:
			apiError(w, http.StatusBadRequest, fmt.Sprintf("chunk body of %d bytes does not match Content-Range %q", len(body), r.Header.Get("Content-Range")))
			return
		}
		body = body[min(s.size-cr.start, int64(len(body))):] // a re-sent range: what is held already is skipped
	}
	size := s.size + int64(len(body))
	switch {
	case cr.totalKnown && size > cr.total:
		apiError(w, http.StatusBadRequest, fmt.Sprintf("received %d bytes, more than the declared total %d", size, cr.total))
		return
	case size > maxObjectBytes:
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("upload of more than %d MiB: the local storage fake holds an upload in memory and refuses a larger one", maxObjectBytes>>20))
		return
	}
	ss.mu.Lock()
	if ss.held+int64(len(body)) > ss.maxHeld {
		ss.mu.Unlock()
		apiError(w, http.StatusTooManyRequests, fmt.Sprintf(
			"resumable uploads in progress would hold more than %d bytes, the local storage fake's limit: finish or cancel one (an abandoned session ends %.0f min after its last request)",
			ss.maxHeld, sessionTTL.Minutes()))
		return
	}
	ss.held += int64(len(body))
	ss.mu.Unlock()
	if len(body) > 0 {
		s.chunks = append(s.chunks, body)
	}
	s.size = size
	if cr.present && !(cr.totalKnown && size == cr.total) { // a request without Content-Range carries the whole object
		if s.size > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", s.size-1))
		}
		if r.Header.Get("X-GUploader-No-308") == "yes" {
			// The Go client asks for 200 plus this header, since its HTTP
			// stack would treat a bare 308 as a redirect.
			w.Header().Set("X-Http-Status-Code-Override", "308")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusPermanentRedirect)
		return
	}
	l.finalize(w, r, id, s)
}

// finalize sends the whole object to the fake as the session's one chunk;
// a failed finalize ends the session, as on Cloud Storage.
func (l *Server) finalize(w http.ResponseWriter, r *http.Request, id string, s *session) {
	rec := httptest.NewRecorder()
	if err := l.fileConflict(s.bucket, s.name); err != nil {
		apiError(rec, http.StatusConflict, err.Error())
	} else {
		fwd := r.Clone(r.Context())
		// PUT goes straight to the fake's chunk handler; its POST handler
		// would take a JSON object's content for a new session's metadata.
		fwd.Method = http.MethodPut
		fwd.URL.RawQuery = url.Values{"uploadType": {"resumable"}, "upload_id": {id}}.Encode()
		readers := make([]io.Reader, len(s.chunks))
		for i, c := range s.chunks {
			readers[i] = bytes.NewReader(c)
		}
		fwd.Body, fwd.ContentLength = io.NopCloser(io.MultiReader(readers...)), s.size
		rng := "bytes */0"
		if s.size > 0 {
			rng = fmt.Sprintf("bytes 0-%d/%d", s.size-1, s.size)
		}
		fwd.Header.Set("Content-Range", rng)
		l.fake.HTTPHandler().ServeHTTP(rec, fwd)
	}
	ok := rec.Code == http.StatusOK
	if ok {
		s.done = rec
	}
	l.sessions.end(id, s, ok)
	replay(w, rec)
}

// end releases a session's place and bytes; the caller holds s.mu. A
// finished session stays to answer a retried finalize, until it idles out.
func (ss *sessions) end(id string, s *session, keep bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.releaseLocked(s)
	if !keep {
		delete(ss.byID, id)
	}
}

func (ss *sessions) releaseLocked(s *session) {
	if !s.ended {
		ss.open--
		ss.held -= s.size
		s.ended, s.chunks = true, nil
	}
}

// sweepLocked drops sessions idle longer than sessionTTL; a busy one is not idle.
func (ss *sessions) sweepLocked(now time.Time) {
	for id, s := range ss.byID {
		if !s.mu.TryLock() {
			continue
		}
		if now.Sub(s.touched) > sessionTTL {
			ss.releaseLocked(s)
			delete(ss.byID, id)
		}
		s.mu.Unlock()
	}
}

func (ss *sessions) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	clear(ss.byID)
}

func replay(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

type contentRange struct {
	present    bool
	hasRange   bool
	start, end int64
	totalKnown bool
	total      int64
}

// parseContentRange reads "bytes A-B/T", "bytes A-B/*", "bytes */T" and
// "bytes */*" (a status query).
func parseContentRange(h string) (contentRange, error) {
	if h == "" {
		return contentRange{}, nil
	}
	bad := fmt.Errorf("invalid Content-Range %q", h)
	spec, ok := strings.CutPrefix(h, "bytes ")
	rng, total, ok2 := strings.Cut(spec, "/")
	if !ok || !ok2 {
		return contentRange{}, bad
	}
	cr := contentRange{present: true}
	if rng != "*" {
		a, b, ok := strings.Cut(rng, "-")
		var err1, err2 error
		cr.start, err1 = strconv.ParseInt(a, 10, 64)
		cr.end, err2 = strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || cr.start < 0 || cr.end < cr.start {
			return cr, bad
		}
		cr.hasRange = true
	}
	if total != "*" {
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil || n < 0 {
			return cr, bad
		}
		cr.total, cr.totalKnown = n, true
	}
	return cr, nil
}

// statusError is a receive error that is not the client's 400.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func receiveStatus(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return http.StatusBadRequest
}

// apiError answers in the JSON API's error shape (a *googleapi.Error).
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	reason, ok := map[int]string{400: "invalid", 404: "notFound", 409: "conflict", 412: "conditionNotMet", 413: "uploadTooLarge", 429: "rateLimitExceeded"}[status]
	if !ok {
		reason = "backendError"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "message": msg,
		"errors": []map[string]string{{"domain": "global", "reason": reason, "message": msg}},
	}})
}
