package httpserve

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// Recover answers 500 to a request whose handler panicked, and logs the
// panic with its stack, as the functions framework does: one bad request
// must not take down the instance and every request in flight with it.
func Recover(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own way to abort a response
			}
			log.ErrorContext(r.Context(), "handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			http.Error(w, "internal error (see the logs)", http.StatusInternalServerError)
		}()
		h.ServeHTTP(w, r)
	})
}

// Deadline bounds every request's context by d (0: no bound), as the
// functions framework does with CLOUD_RUN_TIMEOUT_SECONDS.
func Deadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
