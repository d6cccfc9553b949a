package stack

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/tick"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// halfMinuteDeclaration is the declaration a deployment with TICK_INTERVAL=30s
// may ship: ventas_hora_pais with early_delay 30s (on a 1m deployment it is
// refused at start).
const halfMinuteDeclaration = "internal/aggregation/declarations/ventas_hora_pais.json"

// halfMinuteStack builds cmd/server with ventas_hora_pais's early_delay at
// 30s and starts it with the environment terraform/tasks.tf gives the
// watermark service for tick_interval = "30s".
func halfMinuteStack(t *testing.T) *Stack {
	t.Helper()
	skipWithoutEmulators(t)
	root, err := tfconfig.RepoDir()
	check(t, err)
	raw, err := os.ReadFile(filepath.Join(root, halfMinuteDeclaration))
	check(t, err)
	var decl map[string]any
	check(t, json.Unmarshal(raw, &decl))
	decl["early_delay"] = "30s"
	patched, err := json.MarshalIndent(decl, "", "  ")
	check(t, err)
	ctx := testContext(t, 10*time.Minute)
	bin, err := BuildWith(ctx, t.TempDir(), map[string][]byte{halfMinuteDeclaration: patched})
	check(t, err)
	return need(t, Options{Binary: bin, Adjust: func(d *tfconfig.Deployment) {
		for i, svc := range d.Services {
			if svc.Function != "AdvanceWatermark" {
				continue
			}
			invoker := ""
			for _, j := range d.SchedulerJobs {
				if j.Function == svc.Function {
					invoker = j.ServiceAccountEmail
				}
			}
			env := maps.Clone(svc.Env)
			env["TICK_INTERVAL"] = "30s"
			env["TICK_QUEUE"] = "projects/" + d.Project + "/locations/" + d.Region + "/queues/alpipe-ticks"
			env["TICK_URL"] = "https://" + svc.Name + "-" + placeholderProjectNumber + "." + d.Region + ".run.app"
			env["TICK_INVOKER"] = invoker
			d.Services[i].Env = env
		}
	}})
}

// TestHalfMinuteTicks: with TICK_INTERVAL=30s, through the production
// binary, the ES window of 17:00 gets EARLY panes 30 seconds apart; a
// Scheduler tick delivered twice schedules one follow-up, a follow-up
// delivered twice does nothing the second time and schedules nothing, and
// a lost follow-up delays the pane it would have emitted to the next
// minute's Scheduler tick, 30 seconds later.
func TestHalfMinuteTicks(t *testing.T) {
	s := halfMinuteStack(t)
	ctx := testContext(t, 2*time.Minute)
	due := func() []Dispatch {
		t.Helper()
		ds, err := s.Tasks.Due(ctx)
		check(t, err)
		return ds
	}
	var log []string
	note := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	panes := func() []string { // every order is of ES
		return rowLines(s, "ventas_hora_pais_paneles", "#%s %s at %s pedidos=%s", "pane_index", "timing", "emitted_at", "pedidos")
	}

	// 17:05:00: an order, then the Scheduler tick, twice (a duplicate
	// delivery): one follow-up, for 17:05:30.
	setClock(t, s, storyStart.Add(5*time.Minute))
	publishAcked(ctx, t, s, "P-1", "ES", orderTime)
	fireTick(ctx, t, s)
	fireTick(ctx, t, s)
	created := s.Tasks.Created()
	if len(created) != 1 || s.Tasks.Refused() != 1 {
		t.Fatalf("after two Scheduler ticks at 17:05: %d tasks created, %d refused as duplicates; want 1 and 1", len(created), s.Tasks.Refused())
	}
	checkFollowUpTask(t, s, created[0], storyStart.Add(5*time.Minute+30*time.Second))

	// 17:05:30: the follow-up ticks (P-1 is 30 s old: EARLY), and
	// schedules nothing. An order comes right after it; the same
	// follow-up delivered again then finds nothing due.
	setClock(t, s, storyStart.Add(5*time.Minute+30*time.Second))
	for _, d := range due() {
		note("%s follow-up %s HTTP %d", d.At.Format("15:04:05"), d.Task, d.Status)
	}
	publishAcked(ctx, t, s, "P-2", "ES", orderTime)
	if _, err := s.Tasks.Dispatch(ctx, created[0], 1); err != nil {
		t.Fatal(err)
	}
	note("17:05:30 follow-up %s again", tick.TaskID(created[0].GetScheduleTime().AsTime()))

	// 17:06:00: the Scheduler tick (P-2 is 30 s old: EARLY) schedules
	// 17:06:30's follow-up, which is lost; an order comes at 17:06:00.
	setClock(t, s, storyStart.Add(6*time.Minute))
	fireTick(ctx, t, s)
	publishAcked(ctx, t, s, "P-3", "ES", orderTime)
	s.Tasks.Lose(tick.TaskID(storyStart.Add(6*time.Minute + 30*time.Second)))
	setClock(t, s, storyStart.Add(6*time.Minute+30*time.Second))
	for _, d := range due() {
		note("%s follow-up %s lost=%v", d.At.Format("15:04:05"), d.Task, d.Lost)
	}
	// 17:07:00: the watchdog. P-3 was due at 17:06:30; the Scheduler tick
	// emits it at 17:07:00, 30 s late.
	setClock(t, s, storyStart.Add(7*time.Minute))
	fireTick(ctx, t, s)

	want := []string{
		"#0 EARLY at 2026-03-14T17:05:30Z pedidos=1",
		"#1 EARLY at 2026-03-14T17:06:00Z pedidos=2",
		"#2 EARLY at 2026-03-14T17:07:00Z pedidos=3",
	}
	if diff := cmp.Diff(want, panes()); diff != "" {
		t.Errorf("ES 17:00 panes (-want +got):\n%s\nsteps:\n%s", diff, strings.Join(log, "\n"))
	}
	var names []string
	for _, c := range s.Tasks.Created() {
		names = append(names, c.GetScheduleTime().AsTime().Format("15:04:05"))
	}
	if diff := cmp.Diff([]string{"17:05:30", "17:06:30", "17:07:30"}, names); diff != "" {
		t.Errorf("follow-ups created (-want +got): only Scheduler ticks schedule, one each\n%s", diff)
	}
	env := s.Processes["AdvanceWatermark"].Service.Env
	url, invoker := env["TICK_URL"], env["TICK_INVOKER"]
	var ticks []string
	for _, r := range s.Frontends["AdvanceWatermark"].Requests() {
		kind := "scheduler"
		if r.Header.Get(tick.TaskHeader) != "" {
			kind = "follow-up retry " + r.Header.Get("X-CloudTasks-TaskRetryCount")
			claims := oidcClaims(r.Header.Get("Authorization"))
			if claims["aud"] != url || claims["email"] != invoker {
				t.Errorf("follow-up token for %v as %v, want %s as %s", claims["aud"], claims["email"], url, invoker)
			}
		}
		ticks = append(ticks, fmt.Sprintf("%s %d", kind, r.FnStatus))
	}
	if diff := cmp.Diff([]string{"scheduler 200", "scheduler 200", "follow-up retry 0 200", "follow-up retry 1 200", "scheduler 200", "scheduler 200"}, ticks); diff != "" {
		t.Errorf("ticks (-want +got):\n%s", diff)
	}
	t.Logf("ES 17:00 panes:\n%s\nsteps:\n%s", strings.Join(panes(), "\n"), strings.Join(log, "\n"))
}

// checkFollowUpTask: the task Cloud Tasks holds is named after its time,
// due then, and a POST of {} to the watermark service with an OIDC token
// of the tick's invoker for the service's URL.
func checkFollowUpTask(t *testing.T, s *Stack, c *cloudtaskspb.Task, at time.Time) {
	t.Helper()
	svc := s.Processes["AdvanceWatermark"].Service
	hr := c.GetHttpRequest()
	got := map[string]string{
		"name":     c.GetName(),
		"schedule": c.GetScheduleTime().AsTime().Format(time.RFC3339),
		"method":   hr.GetHttpMethod().String(),
		"url":      hr.GetUrl(),
		"body":     string(hr.GetBody()),
		"oidc":     hr.GetOidcToken().GetServiceAccountEmail() + " for " + hr.GetOidcToken().GetAudience(),
		"deadline": c.GetDispatchDeadline().AsDuration().String(),
	}
	want := map[string]string{
		"name":     svc.Env["TICK_QUEUE"] + "/tasks/" + tick.TaskID(at),
		"schedule": at.Format(time.RFC3339),
		"method":   "POST",
		"url":      svc.Env["TICK_URL"],
		"body":     "{}",
		"oidc":     svc.Env["TICK_INVOKER"] + " for " + svc.Env["TICK_URL"],
		"deadline": "1m0s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("follow-up task (-want +got):\n%s", diff)
	}
}

// oidcClaims decodes an unsigned ID token's claims.
func oidcClaims(authorization string) map[string]any {
	parts := strings.Split(strings.TrimPrefix(authorization, "Bearer "), ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}
