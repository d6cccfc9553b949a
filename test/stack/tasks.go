package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"

	"github.com/alpinashop/alpipe/internal/tick/ticktest"
)

// Tasks plays Cloud Tasks, which has no emulator: the processes create
// tasks through the real client against ticktest's in-process server
// (CLOUD_TASKS_EMULATOR_HOST), and Due dispatches each task due on the
// stack's clock as Cloud Tasks does, to the front end of the service whose
// URL the task names.
type Tasks struct {
	*ticktest.Server
	now func() time.Time

	mu       sync.Mutex
	services map[string]*Frontend // service URL -> front end
	lose     map[string]bool      // short task IDs never dispatched
}

// Dispatch is one delivery of a task and its answer.
type Dispatch struct {
	Task   string    // the short task ID
	At     time.Time // its schedule time
	Status int
	Body   []byte
	Lost   bool // dropped (Lose) instead of sent
}

func newTasks(now func() time.Time) (*Tasks, error) {
	srv, err := ticktest.Start(now)
	if err != nil {
		return nil, err
	}
	return &Tasks{Server: srv, now: now, services: map[string]*Frontend{}, lose: map[string]bool{}}, nil
}

func (t *Tasks) route(serviceURL string, f *Frontend) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[serviceURL] = f
}

// Lose makes the task of that short ID vanish instead of being dispatched,
// as a follow-up lost to a queue outage would.
func (t *Tasks) Lose(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lose[id] = true
}

// Due dispatches every task due at the stack's clock, earliest first.
func (t *Tasks) Due(ctx context.Context) ([]Dispatch, error) {
	var out []Dispatch
	var errs []error
	for _, task := range t.Take(t.now()) {
		d, err := t.Dispatch(ctx, task, 0)
		out, errs = append(out, d), append(errs, err)
	}
	return out, errors.Join(errs...)
}

// Dispatch sends one task, as its attempt number retry (0 first): Cloud
// Tasks delivers at least once, so a test may send a task again.
func (t *Tasks) Dispatch(ctx context.Context, task *cloudtaskspb.Task, retry int) (Dispatch, error) {
	id := path.Base(task.GetName())
	d := Dispatch{Task: id, At: task.GetScheduleTime().AsTime()}
	hr := task.GetHttpRequest()
	u, err := url.Parse(hr.GetUrl())
	if err != nil {
		return d, fmt.Errorf("task %s: url %q: %w", id, hr.GetUrl(), err)
	}
	t.mu.Lock()
	f, ok := t.services[u.Scheme+"://"+u.Host]
	lost := t.lose[id]
	t.mu.Unlock()
	if lost {
		d.Lost = true
		return d, nil
	}
	if !ok {
		return d, fmt.Errorf("task %s: no service at %s", id, hr.GetUrl())
	}
	h := http.Header{}
	for k, v := range hr.GetHeaders() {
		h.Set(k, v)
	}
	h.Set("User-Agent", "Google-Cloud-Tasks")
	// projects/P/locations/L/queues/QUEUE/tasks/ID
	h.Set("X-CloudTasks-QueueName", path.Base(path.Dir(path.Dir(task.GetName()))))
	h.Set("X-CloudTasks-TaskName", id)
	h.Set("X-CloudTasks-TaskRetryCount", strconv.Itoa(retry))
	h.Set("X-CloudTasks-TaskExecutionCount", strconv.Itoa(retry))
	h.Set("X-CloudTasks-TaskETA", strconv.FormatInt(d.At.Unix(), 10))
	if tok := hr.GetOidcToken(); tok != nil {
		aud := tok.GetAudience()
		if aud == "" {
			aud = hr.GetUrl()
		}
		h.Set("Authorization", "Bearer "+idToken(aud, tok.GetServiceAccountEmail(), time.Now()))
	}
	d.Status, d.Body, err = send(ctx, "task "+id, task.GetDispatchDeadline().AsDuration(),
		hr.GetHttpMethod().String(), f.URL()+u.RequestURI(), hr.GetBody(), h)
	return d, err
}
