package functions

import (
	"errors"
	"net/http"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/alpinashop/alpipe/internal/sweep"
)

func init() {
	functions.HTTP(SweepLandingName, SweepLanding)
}

// SweepLanding is the Cloud Scheduler call that ingests the landing files
// Eventarc never delivered (see package sweep). It answers 200 with the
// summary; 500 when the listing or the ledger failed, so the failure shows
// and the next call retries. An overlapping call finds the run lock taken
// and answers 200 with "busy": the scheduler must not retry it, the run in
// progress does the work.
func SweepLanding(w http.ResponseWriter, r *http.Request) {
	app, err := current()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	s, err := app.Sweeper()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	sum, err := s.Run(r.Context())
	if err != nil && !errors.Is(err, sweep.ErrBusy) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}
