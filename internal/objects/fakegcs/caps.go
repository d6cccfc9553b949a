package fakegcs

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// Resumable upload sessions are capped: each holds an open spool file until
// it finishes, is cancelled or idles out (sessionTTL), and a client that
// abandoned 1,008 of them exhausted the process's descriptors, so that
// every later upload failed. A session or chunk beyond a cap is refused
// with 429 and the reason; the client may retry once others have ended.
const (
	// defaultMaxSessions is far more than the uploads one laptop runs at
	// once, and a small part of `ulimit -n 1024`.
	defaultMaxSessions = 64
	// defaultMaxSessionBytes is some 17 of the largest benchmark files
	// (460 MB) in progress at once.
	defaultMaxSessionBytes = 8 << 30
)

// statusError is an error receiving an upload that is not the client's
// bad request (400): its status says whose it is.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// receiveStatus is the status that answers err, an error receiving an
// upload's bytes: 400 unless err says otherwise.
func receiveStatus(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return http.StatusBadRequest
}

// tooManySessions refuses a new session while maxSessions are open.
func (u *streamingUploads) tooManySessions() error {
	return &statusError{http.StatusTooManyRequests, fmt.Errorf(
		"%d resumable upload sessions are in progress, the local storage fake's limit: finish or cancel one (an abandoned session ends %.0f min after its last request)",
		u.maxSessions, sessionTTL.Minutes())}
}

// held counts the bytes that r yields into u.held, and fails once all the
// sessions together would hold more than their cap. n is what r counted:
// what a rolled-back chunk gives back.
type held struct {
	r     io.Reader
	total *atomic.Int64
	limit int64
	n     int64
}

func (u *streamingUploads) holding(r io.Reader) *held {
	return &held{r: r, total: &u.held, limit: u.maxSessionBytes}
}

func (h *held) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += int64(n)
	if h.total.Add(int64(n)) > h.limit {
		return n, &statusError{http.StatusTooManyRequests, fmt.Errorf(
			"resumable uploads in progress would hold more than %d bytes, the local storage fake's limit: finish or cancel one (an abandoned session ends %.0f min after its last request)",
			h.limit, sessionTTL.Minutes())}
	}
	return n, err
}

// giveBack returns what h counted, for a chunk that was rolled back.
func (h *held) giveBack() { h.total.Add(-h.n) }
