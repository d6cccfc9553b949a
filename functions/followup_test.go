package functions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/tick"
)

type followUpRecorder struct {
	at  []time.Time
	err error
}

func (r *followUpRecorder) Schedule(_ context.Context, at time.Time) error {
	r.at = append(r.at, at)
	return r.err
}

// TestFollowUpTicks: a Scheduler tick schedules its follow-up and ticks; a
// follow-up ticks and schedules nothing; a queue failure does not fail the
// tick.
func TestFollowUpTicks(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header map[string]string
		err    error
		want   []time.Time
	}{
		{name: "scheduler tick", header: map[string]string{"X-CloudScheduler": "true"}, want: []time.Time{now.Add(30 * time.Second)}},
		{name: "follow-up", header: map[string]string{tick.TaskHeader: tick.TaskID(now)}},
		{name: "queue refuses", header: map[string]string{"X-CloudScheduler": "true"}, err: errors.New("permission denied"), want: []time.Time{now.Add(30 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &followUpRecorder{err: tc.err}
			ticked := 0
			h := FollowUpTicks{
				Next:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { ticked++; w.WriteHeader(http.StatusOK) }),
				Chain: &tick.Chain{Interval: tick.HalfMinute, FollowUp: rec, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
				Now:   func() time.Time { return now },
			}
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK || ticked != 1 {
				t.Errorf("HTTP %d, ticked %d times; want 200 and one tick", w.Code, ticked)
			}
			if diff := cmp.Diff(tc.want, rec.at); diff != "" {
				t.Errorf("scheduled (-want +got):\n%s", diff)
			}
		})
	}
}
