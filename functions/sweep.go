package functions

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/sweep"
)

func sweepLanding(_ context.Context, _ *config.Sweep, app *setup.App) (Handler, error) {
	return Handler{Handler: jsonOnly(bounded(maxTickBody, SweepLanding{Sweeper: app.Sweeper, Log: app.Log}))}, nil
}

// SweepLanding is the Cloud Scheduler call that ingests the landing files
// Eventarc never delivered (see package sweep). It answers 200 with the
// summary; 500 when the listing or the ledger failed, so the failure shows
// and the next call retries. An overlapping call finds the run lock taken
// and answers 200 with "busy": the scheduler must not retry it, the run in
// progress does the work.
type SweepLanding struct {
	Sweeper *sweep.Sweeper
	Log     *slog.Logger
}

func (f SweepLanding) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sum, err := f.Sweeper.Run(r.Context())
	if err != nil && !errors.Is(err, sweep.ErrBusy) {
		f.Log.ErrorContext(r.Context(), "sweep failed", "error", err.Error())
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}
