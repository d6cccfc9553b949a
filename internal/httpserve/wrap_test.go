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

func TestDeadlineBoundsTheContext(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		want    bool // the context has a deadline
	}{
		{name: "CLOUD_RUN_TIMEOUT_SECONDS set", timeout: time.Minute, want: true},
		{name: "unset", timeout: 0, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bool
			h := Deadline(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				_, got = r.Context().Deadline()
			}), tt.timeout)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			if got != tt.want {
				t.Errorf("deadline set: %v, want %v", got, tt.want)
			}
		})
	}
}
