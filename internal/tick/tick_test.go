package tick_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/alpinashop/alpipe/internal/tick"
	"github.com/alpinashop/alpipe/internal/tick/ticktest"
)

var minute = time.Date(2026, 3, 14, 17, 5, 0, 0, time.UTC)

func TestNext(t *testing.T) {
	half, half30, none := tick.HalfMinute, minute.Add(30*time.Second), time.Time{}
	for _, tc := range []struct {
		name     string
		interval time.Duration
		now      time.Time
		followUp bool
		want     time.Time // zero: none
	}{
		{"one minute schedules nothing", tick.Minute, minute, false, none},
		{"scheduler tick on the minute", half, minute, false, half30},
		{"scheduler tick a little late, same target", half, minute.Add(4 * time.Second), false, half30},
		{"retry of the same tick, same target", half, half30.Add(-time.Millisecond), false, half30},
		{"so late its half minute has passed", half, half30, false, none},
		{"a follow-up schedules nothing", half, half30, true, none},
		{"a follow-up early on the minute schedules nothing", half, minute, true, none},
		{"unset interval", 0, minute, false, none},
		{"other zones, same instant", half, minute.In(time.FixedZone("CET", 3600)).Add(time.Second), false, half30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tick.Next(tc.interval, tc.now, tc.followUp)
			if ok != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Errorf("Next(%s, %s, %v) = %s, %v; want %s", tc.interval, tc.now, tc.followUp, got, ok, tc.want)
			}
		})
	}
}

func TestTaskID(t *testing.T) {
	at := minute.Add(30 * time.Second)
	for _, tc := range []struct {
		name string
		a, b time.Time
		same bool
	}{
		{"same instant", at, at, true},
		{"same instant, other zone", at, at.In(time.FixedZone("CET", 3600)), true},
		{"next half minute", at, at.Add(30 * time.Second), false},
		{"next day", at, at.Add(24 * time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tick.TaskID(tc.a) == tick.TaskID(tc.b); got != tc.same {
				t.Errorf("TaskID(%s)=%s, TaskID(%s)=%s: same=%v, want %v", tc.a, tick.TaskID(tc.a), tc.b, tick.TaskID(tc.b), got, tc.same)
			}
		})
	}
	id := tick.TaskID(at)
	// Cloud Tasks: letters, digits, '-' and '_', at most 500; readable time last.
	if len(id) > 500 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" || !strings.HasSuffix(id, "-20260314T170530Z") {
		t.Errorf("TaskID = %q", id)
	}
}

func TestIsFollowUp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   bool
	}{
		{"scheduler", http.Header{"X-Cloudscheduler": {"true"}}, false},
		{"cloud tasks", http.Header{"X-Cloudtasks-Taskname": {tick.TaskID(minute)}}, true},
		{"empty name", http.Header{"X-Cloudtasks-Taskname": {""}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tick.IsFollowUp(tc.header); got != tc.want {
				t.Errorf("IsFollowUp = %v, want %v", got, tc.want)
			}
		})
	}
}

type recorder struct {
	at  []time.Time
	err error
}

func (r *recorder) Schedule(_ context.Context, at time.Time) error {
	r.at = append(r.at, at)
	return r.err
}

// TestChainFailureDoesNotFailTheTick: a queue that refuses is logged and
// counted; After returns, and the caller's tick goes on. A one-minute
// chain never asks the queue.
func TestChainFailureDoesNotFailTheTick(t *testing.T) {
	var logs bytes.Buffer
	r := &recorder{err: errors.New("permission denied")}
	c := &tick.Chain{Interval: tick.HalfMinute, FollowUp: r, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	c.After(context.Background(), minute, false)
	c.After(context.Background(), minute.Add(30*time.Second), true)
	c.After(context.Background(), minute.Add(time.Minute), false)
	want := []time.Time{minute.Add(30 * time.Second), minute.Add(90 * time.Second)}
	if diff := cmp.Diff(want, r.at); diff != "" {
		t.Errorf("follow-ups asked for (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), `"msg":"follow-up tick not scheduled"`); n != 2 ||
		!strings.Contains(logs.String(), `"failures":2`) {
		t.Errorf("%d log lines, want 2, the second counting 2 failures:\n%s", n, logs.String())
	}

	// A one-minute chain schedules nothing, at any second of the minute.
	r.at = nil
	one := &tick.Chain{Interval: tick.Minute, FollowUp: r}
	for s := 0; s < 120; s += 10 {
		one.After(context.Background(), minute.Add(time.Duration(s)*time.Second), false)
	}
	if len(r.at) != 0 {
		t.Errorf("a one-minute chain scheduled %v, want nothing", r.at)
	}
}

func cfg(addr string) tick.TasksConfig {
	return tick.TasksConfig{
		Queue:    "projects/alpipe-test/locations/europe-west1/queues/alpipe-ticks",
		URL:      "https://alpipe-watermark-123456789012.europe-west1.run.app",
		Invoker:  "alpipe-watermark-tick@alpipe-test.iam.gserviceaccount.com",
		Deadline: time.Minute,
		Emulator: addr,
	}
}

func startTasks(t *testing.T) (*ticktest.Server, *tick.Tasks) {
	t.Helper()
	srv, err := ticktest.Start(func() time.Time { return minute })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	tasks, err := tick.NewTasks(context.Background(), cfg(srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tasks.Close() })
	return srv, tasks
}

// TestTasksConformance: the port's contract, and the task as created: named
// after its time, at that time, a POST of {} to the service with an OIDC
// token of the invoker for the service's URL.
func TestTasksConformance(t *testing.T) {
	srv, tasks := startTasks(t)
	ticktest.Conformance(t, tasks, func() []time.Time {
		var out []time.Time
		for _, c := range srv.Created() {
			out = append(out, c.GetScheduleTime().AsTime())
		}
		return out
	})
	if srv.Refused() != 3 {
		t.Errorf("the queue refused %d duplicates, want 3", srv.Refused())
	}
	at := minute.Add(30 * time.Second) // the first time Conformance schedules
	c := cfg("")
	want := c.Task(at)
	want.CreateTime = srv.Created()[0].GetCreateTime()
	if diff := cmp.Diff(want, srv.Created()[0], protocmp.Transform()); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	if got := want.GetName(); got != c.Queue+"/tasks/"+tick.TaskID(at) {
		t.Errorf("name %s", got)
	}
}

// TestTasksErrors: AlreadyExists is success, anything else is returned.
func TestTasksErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    codes.Code
		wantErr bool
	}{
		{"already exists", codes.AlreadyExists, false},
		{"permission denied", codes.PermissionDenied, true},
		{"unavailable", codes.Unavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tasks := startTasks(t)
			srv.FailCreate(func(*cloudtaskspb.Task) error { return status.Error(tc.code, "injected") })
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := tasks.Schedule(ctx, minute.Add(30*time.Second))
			if (err != nil) != tc.wantErr {
				t.Errorf("Schedule: %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

func TestTasksConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*tick.TasksConfig)
		want int
	}{
		{"valid", func(*tick.TasksConfig) {}, 0},
		{"queue without project", func(c *tick.TasksConfig) { c.Queue = "alpipe-ticks" }, 1},
		{"no url, no invoker", func(c *tick.TasksConfig) { c.URL, c.Invoker = "", "" }, 2},
		{"deadline too short", func(c *tick.TasksConfig) { c.Deadline = 10 * time.Second }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg("")
			tc.edit(&c)
			if got := c.Problems(); len(got) != tc.want {
				t.Errorf("Problems = %q, want %d", got, tc.want)
			}
		})
	}
}
