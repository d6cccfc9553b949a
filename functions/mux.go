package functions

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/alpinashop/alpipe/internal/httpserve"
)

// Mount routes hs on mux as the functions framework would: with target set,
// only that function, at "/" (every path reaches it, as Cloud Run's URL
// does); unset, each function at "/<Name>". Every handler gets the
// framework's wrapping: a panic answers 500 and timeout (from
// CLOUD_RUN_TIMEOUT_SECONDS; 0 for none) bounds the request's context.
func Mount(mux *http.ServeMux, hs []Handler, target string, timeout time.Duration, log *slog.Logger) error {
	wrap := func(h http.Handler) http.Handler {
		return httpserve.Recover(httpserve.Deadline(h, timeout), log)
	}
	if target != "" {
		for _, h := range hs {
			if h.Name == target {
				mux.Handle("/", wrap(h.Handler))
				return nil
			}
		}
		return fmt.Errorf("FUNCTION_TARGET=%q is not among the functions built (%d)", target, len(hs))
	}
	for _, h := range hs {
		mux.Handle("/"+h.Name, wrap(h.Handler))
	}
	return nil
}
