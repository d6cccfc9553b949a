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
	next := []time.Time{now.Add(30 * time.Second)}
	for _, tc := range []struct {
		name, header, value string
		err                 error
		want                []time.Time
	}{
		{"scheduler tick", "X-CloudScheduler", "true", nil, next},
		{"follow-up", tick.TaskHeader, tick.TaskID(now), nil, nil},
		{"queue refuses", "X-CloudScheduler", "true", errors.New("permission denied"), next},
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
			r.Header.Set(tc.header, tc.value)
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
