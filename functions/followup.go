package functions

import (
	"context"
	"net/http"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/tick"
)

// withFollowUps wraps the tick handler next for the deployment's interval:
// unchanged for 1m; for 30s each Scheduler tick first schedules its
// follow-up through Cloud Tasks (package tick), then ticks. Scheduling
// comes first so that a tick that fails or overruns still has its
// follow-up.
func withFollowUps(ctx context.Context, c config.Tick, app *setup.App, next http.Handler) (http.Handler, error) {
	if !c.FollowUps() {
		return next, nil
	}
	tasks, err := tick.NewTasks(ctx, c.Tasks())
	if err != nil {
		return nil, err
	}
	app.OnClose(tasks.Close)
	return FollowUpTicks{Next: next, Chain: &tick.Chain{Interval: c.Interval, FollowUp: tasks, Log: app.Log}, Now: app.Now}, nil
}

// FollowUpTicks schedules a Scheduler tick's follow-up, then runs the tick.
// A follow-up tick (the X-CloudTasks-TaskName header) schedules nothing.
// Failing to schedule never fails the tick: tick.Chain logs and counts it,
// and the next minute's Scheduler tick covers the lost half minute.
type FollowUpTicks struct {
	Next  http.Handler
	Chain *tick.Chain
	Now   func() time.Time
}

func (f FollowUpTicks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Chain.After(r.Context(), f.Now(), tick.IsFollowUp(r.Header))
	f.Next.ServeHTTP(w, r)
}
