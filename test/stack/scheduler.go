package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// Scheduler calls the services of scheduler.tf's jobs as Cloud Scheduler
// does, with Cloud Scheduler's headers and an OIDC token.
type Scheduler struct {
	now func() time.Time

	mu   sync.Mutex
	jobs []*schedJob
}

type schedJob struct {
	tfconfig.SchedulerJob
	target   *Frontend
	audience string
	minutes  func(t time.Time) bool // whether the schedule fires at minute t
	last     time.Time              // the last minute it fired for
}

// Call is one scheduler call and its answer.
type Call struct {
	Job    string
	At     time.Time // the schedule time it stood for
	Status int
	Body   []byte
}

func newScheduler(now func() time.Time) *Scheduler {
	return &Scheduler{now: now}
}

func (s *Scheduler) add(j tfconfig.SchedulerJob, target *Frontend, audience string) error {
	m, err := cronMinutes(j.Schedule)
	if err != nil {
		return fmt.Errorf("scheduler job %s: %w", j.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = append(s.jobs, &schedJob{SchedulerJob: j, target: target, audience: audience, minutes: m})
	return nil
}

// JobFor names the job that calls a service (by its FUNCTION_TARGET).
func (s *Scheduler) JobFor(function string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.target.proc.Service.Function == function {
			return j.Name, true
		}
	}
	return "", false
}

// Fire calls a job's target now, once, as a manual "force run" does.
func (s *Scheduler) Fire(ctx context.Context, job string) (Call, error) {
	s.mu.Lock()
	var j *schedJob
	for _, c := range s.jobs {
		if c.Name == job {
			j = c
		}
	}
	s.mu.Unlock()
	if j == nil {
		return Call{}, fmt.Errorf("no scheduler job %s", job)
	}
	return s.call(ctx, j, s.now().Truncate(time.Minute))
}

func (s *Scheduler) call(ctx context.Context, j *schedJob, at time.Time) (Call, error) {
	h := http.Header{}
	for k, v := range j.Headers {
		h.Set(k, v)
	}
	h.Set("User-Agent", "Google-Cloud-Scheduler")
	h.Set("X-CloudScheduler", "true")
	h.Set("X-CloudScheduler-JobName", j.Name)
	h.Set("X-CloudScheduler-ScheduleTime", at.UTC().Format(time.RFC3339))
	h.Set("Authorization", "Bearer "+idToken(j.audience, j.ServiceAccountEmail, time.Now()))
	c := Call{Job: j.Name, At: at}
	var err error
	c.Status, c.Body, err = send(ctx, "scheduler job "+j.Name, j.AttemptDeadline.Duration,
		j.HTTPMethod, j.target.URL()+"/", []byte(j.Body), h)
	return c, err
}

// Due fires, once each, every job whose schedule names a minute passed
// since its last firing (Cloud Scheduler does not catch up missed runs
// either). The first Due only records the current minute.
func (s *Scheduler) Due(ctx context.Context) ([]Call, error) {
	now := s.now().Truncate(time.Minute)
	s.mu.Lock()
	var due []*schedJob
	for _, j := range s.jobs {
		if j.last.IsZero() {
			j.last = now
			continue
		}
		fire := false
		for m := j.last.Add(time.Minute); !m.After(now); m = m.Add(time.Minute) {
			if j.minutes(m) {
				fire = true
			}
		}
		if fire {
			due = append(due, j)
		}
		if now.After(j.last) {
			j.last = now
		}
	}
	s.mu.Unlock()
	var calls []Call
	var errs []error
	for _, j := range due {
		c, err := s.call(ctx, j, now)
		calls, errs = append(calls, c), append(errs, err)
	}
	return calls, errors.Join(errs...)
}

// cronMinutes understands the schedules this configuration uses: every
// field "*" but the minute, which is "*" or "*/N".
func cronMinutes(spec string) (func(time.Time) bool, error) {
	f := strings.Fields(spec)
	if len(f) != 5 {
		return nil, fmt.Errorf("schedule %q: want five cron fields", spec)
	}
	for _, x := range f[1:] {
		if x != "*" {
			return nil, fmt.Errorf("schedule %q: only the minute field may be other than *", spec)
		}
	}
	if f[0] == "*" {
		return func(time.Time) bool { return true }, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(f[0], "*/"))
	if err != nil || n < 1 || n > 59 || !strings.HasPrefix(f[0], "*/") {
		return nil, fmt.Errorf("schedule %q: want a minute of * or */N", spec)
	}
	return func(t time.Time) bool { return t.Minute()%n == 0 }, nil
}
