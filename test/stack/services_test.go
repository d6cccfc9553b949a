package stack

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// TestServicesStartWithTerraformEnvironment: every service Terraform
// deploys starts from the production binary with exactly the environment
// Terraform gives it, plus only what Cloud Run and the emulators add, and
// answers on its port.
func TestServicesStartWithTerraformEnvironment(t *testing.T) {
	s := need(t, Options{})
	services := s.Deployment.Services
	if len(services) == 0 {
		t.Fatal("Terraform deploys no service")
	}
	added := []string{"ALPIPE_CLOCK_FILE", "BIGQUERY_EMULATOR_HOST", "CLOUD_TASKS_EMULATOR_HOST", "FIRESTORE_EMULATOR_HOST", "K_CONFIGURATION", "K_REVISION", "K_SERVICE", "PORT", "STORAGE_EMULATOR_HOST"}
	for _, svc := range services {
		t.Run(svc.Function, func(t *testing.T) {
			p, ok := s.Processes[svc.Function]
			if !ok {
				t.Fatalf("no process for %s (%s)", svc.Function, svc.Name)
			}
			if !p.Running() {
				t.Fatalf("%s is not running; its output:\n%s", svc.Name, p.Output())
			}
			var want []string
			for k, v := range svc.Env {
				want = append(want, k+"="+v)
			}
			var got []string
			for _, kv := range p.Env() {
				k, _, _ := strings.Cut(kv, "=")
				if !slices.Contains(added, k) {
					got = append(got, kv)
				}
			}
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("environment besides the platform's and the emulators' (-terraform +process):\n%s", diff)
			}
			if !slices.Contains(p.Env(), "K_SERVICE="+svc.Name) {
				t.Errorf("environment %q lacks K_SERVICE=%s, the Cloud Run service name", p.Env(), svc.Name)
			}
		})
	}
}

// TestBrokenEnvironmentFailsToStart: a service whose environment the
// binary refuses makes Start fail, naming the service and quoting the
// process's own words, which name the variable.
func TestBrokenEnvironmentFailsToStart(t *testing.T) {
	skipWithoutEmulators(t)
	ctx := testContext(t, time.Minute)
	s, err := Start(ctx, Options{Binary: binary, Start: storyStart, Adjust: func(d *tfconfig.Deployment) {
		for _, svc := range d.Services {
			if svc.Function == "IngestCSV" {
				delete(svc.Env, "STAGING_BUCKET")
			}
		}
	}})
	if err == nil {
		_ = s.Close()
		t.Fatal("IngestCSV without STAGING_BUCKET started; want a refusal at start")
	}
	for _, want := range []string{"alpipe-ingest", "IngestCSV", "STAGING_BUCKET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
}

// TestSchedulerCallsEveryMinute runs the Cloud Scheduler loop on the test
// clock: each job fires once per minute its schedule names (no catch-up of
// skipped minutes, as Cloud Scheduler), with Cloud Scheduler's headers, and
// the watermark process reads the same clock.
func TestSchedulerCallsEveryMinute(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, time.Minute)
	tick, ok := s.Scheduler.JobFor("AdvanceWatermark")
	if !ok {
		t.Fatal("no scheduler job calls AdvanceWatermark")
	}
	if _, err := s.Scheduler.Due(ctx); err != nil { // records the start minute
		t.Fatal(err)
	}
	var got []string
	for _, step := range []time.Duration{30 * time.Second, time.Minute, 3 * time.Minute, 15 * time.Minute} {
		at := storyStart.Add(step)
		setClock(t, s, at)
		calls, err := s.Scheduler.Due(ctx)
		check(t, err)
		for _, c := range calls {
			got = append(got, at.Format("15:04:05")+" "+c.Job)
			if c.Job != tick {
				continue
			}
			var res stream.TickResult
			if err := json.Unmarshal(c.Body, &res); err != nil {
				t.Fatalf("%s: %v: %s", c.Job, err, c.Body)
			}
			if !res.Now.Equal(at) {
				t.Errorf("the watermark process ticked at %s, want the test clock's %s", res.Now, at)
			}
		}
	}
	want := []string{"17:01:00 " + tick, "17:03:00 " + tick, "17:15:00 " + tick}
	if sweep, ok := s.Scheduler.JobFor("SweepLanding"); ok {
		want = append(want, "17:15:00 "+sweep) // */15
	}
	sort.Strings(got)
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scheduler calls (-want +got):\n%s", diff)
	}
	reqs := s.Frontends["AdvanceWatermark"].Requests()
	if len(reqs) == 0 {
		t.Fatal("the watermark front end saw no request")
	}
	checkHeaders(t, reqs[0].Header, map[string]string{
		"User-Agent":               "Google-Cloud-Scheduler",
		"X-Cloudscheduler":         "true",
		"X-Cloudscheduler-Jobname": tick,
		"Content-Type":             "application/json",
	})
}

// checkHeaders checks a request's headers against want, and that it
// carries a Bearer ID token (header.claims.signature) as Google's callers do.
func checkHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for name, want := range want {
		if got := h.Get(name); got != want {
			t.Errorf("header %s: %q, want %q", name, got, want)
		}
	}
	if a := h.Get("Authorization"); !strings.HasPrefix(a, "Bearer ") || strings.Count(a, ".") != 2 {
		t.Errorf("Authorization %q: want a Bearer ID token", a)
	}
}

// TestMissedFileIsSweptOnce: a file dropped while IngestCSV is down is
// delivered by Eventarc with backoff until Eventarc gives up (24 h,
// compressed); the SweepLanding job, once the file is older than
// SWEEP_GRACE, loads it exactly once.
func TestMissedFileIsSweptOnce(t *testing.T) {
	t.Parallel()
	// The sweeper compares the objects' creation time, which the fake GCS
	// takes from the real clock, with its processing time: start the test
	// clock at the real time.
	start := time.Now().UTC().Truncate(time.Second)
	s := need(t, Options{Start: start, Backoff: Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond, GiveUp: 300 * time.Millisecond}})
	ctx := testContext(t, time.Minute)
	ingest := s.Processes["IngestCSV"]
	check(t, ingest.Stop())
	const name = "exportaciones/2026/03/15/pedidos-erp.csv"
	landing := s.Buckets["landing"]
	gen := upload(ctx, t, s, name, read(t, name))
	ev, err := s.Eventarc.Wait(ctx, landing, name, gen, waitTimeout)
	check(t, err)
	if !ev.GaveUp || len(ev.Attempts) < 3 || slices.ContainsFunc(ev.Attempts, func(st int) bool { return st != 503 }) {
		t.Fatalf("event: acked=%v gave up=%v after %v; want retries answered 503 (service down), then given up",
			ev.Acked, ev.GaveUp, ev.Attempts)
	}
	check(t, ingest.Start(ctx))

	sweep, ok := s.Scheduler.JobFor("SweepLanding")
	if !ok {
		t.Skip("Terraform deploys no SweepLanding scheduler job yet: the file stays unloaded (the gap the sweeper closes)")
	}
	grace, err := time.ParseDuration(s.Processes["SweepLanding"].Service.Env["SWEEP_GRACE"])
	if err != nil {
		t.Fatalf("SWEEP_GRACE: %v", err)
	}
	key := ledger.Key{Bucket: landing, Object: name, Generation: gen}
	l := s.ledger(t)
	for _, at := range []time.Time{start.Add(grace / 2), start.Add(grace + time.Minute), start.Add(grace + 16*time.Minute)} {
		setClock(t, s, at)
		c, err := s.Scheduler.Fire(ctx, sweep)
		check(t, err)
		rec, ok, err := l.Get(ctx, key)
		check(t, err)
		young := at.Sub(start) < grace
		switch {
		case young && ok:
			t.Errorf("at +%s (grace %s) the sweeper took the file: %s", at.Sub(start), grace, rec.State)
		case !young && (!ok || rec.State != ledger.Done):
			t.Errorf("at +%s: ledger %+v (found %v), want DONE; sweeper answered %s", at.Sub(start), rec, ok, c.Body)
		}
		t.Logf("+%s: sweeper answered %s", at.Sub(start), strings.TrimSpace(string(c.Body)))
	}
	if n := len(s.BigQuery.Rows("lineas_pedido")); n != 4 {
		t.Errorf("lineas_pedido holds %d rows, want the file's 4 valid rows exactly once", n)
	}
}
