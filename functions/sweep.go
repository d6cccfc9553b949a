package functions

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/sweep"
)

// advanceWatermark is the Cloud Scheduler tick of the stream processor.
func advanceWatermark(ctx context.Context, c *config.Watermark, app *setup.App) (Handler, error) {
	tick := scheduled(app.Log, "tick", stream.ErrTickBusy, func(ctx context.Context) (stream.TickResult, error) {
		return app.Stream.Tick(ctx, app.Now())
	})
	h, err := withFollowUps(ctx, c.Tick, app, tick)
	if err != nil {
		return Handler{}, err
	}
	return Handler{Handler: jsonOnly(bounded(maxTickBody, h))}, nil
}

// sweepLanding is the Cloud Scheduler call that ingests the landing files
// Eventarc never delivered (see package sweep).
func sweepLanding(_ context.Context, _ *config.Sweep, app *setup.App) (Handler, error) {
	return Handler{Handler: jsonOnly(bounded(maxTickBody, scheduled(app.Log, "sweep", sweep.ErrBusy, app.Sweeper.Run)))}, nil
}

// scheduled serves a Cloud Scheduler call of run: 200 with its result, also
// when its error is busy (an overlapping call, whose run in progress does
// the work: the scheduler must not retry); 500 on any other error, so that
// the failure shows and the next call retries.
func scheduled[R any](log *slog.Logger, what string, busy error, run func(context.Context) (R, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := run(r.Context())
		if err != nil && !errors.Is(err, busy) {
			log.ErrorContext(r.Context(), what+" failed", "error", err.Error())
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, res)
	})
}
