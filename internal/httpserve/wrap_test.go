package httpserve

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRecoverAnswers500(t *testing.T) {
	h := Recover(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", rec.Code)
	}
}

// TestDeadlineBoundsTheContext: with CLOUD_RUN_TIMEOUT_SECONDS set the
// request's context has a deadline, unset none.
func TestDeadlineBoundsTheContext(t *testing.T) {
	for timeout, want := range map[time.Duration]bool{time.Minute: true, 0: false} {
		var got bool
		h := Deadline(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, got = r.Context().Deadline() }), timeout)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		if got != want {
			t.Errorf("timeout %s: deadline set %v, want %v", timeout, got, want)
		}
	}
}
