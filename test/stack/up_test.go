package stack

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// upStory is the orders story scripts/stack.sh up suggests publishing.
const upStory = "testdata/pedidos/historia.jsonl"

// TestUp keeps a stack running for manual use, printing where everything
// is, until interrupted: `scripts/stack.sh up`. Without STACK_UP=1 it
// skips.
//
// It runs on the story's clock, not December's: a test clock that starts
// at the last step of testdata/pedidos/historia.jsonl (2026-03-14 20:30
// UTC) and moves one second per real second, so that the orders the
// banner suggests publishing are two or three hours old rather than nine
// months, and Cloud Scheduler's jobs fire on their Terraform schedules
// read on that clock.
func TestUp(t *testing.T) {
	if os.Getenv("STACK_UP") == "" {
		t.Skip("STACK_UP=1 not set: scripts/stack.sh up keeps the stack running")
	}
	skipWithoutEmulators(t)
	start := storyEnd(storySteps(t))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Printf("stack: starting the services on the emulators (about 10 s)...\n")
	s, err := Start(ctx, Options{Binary: binary, Output: HumanLog(os.Stdout), Start: start})
	check(t, err)
	defer s.Close()
	srv := httptest.NewServer(console(t, s))
	defer srv.Close()
	upBanner(os.Stdout, s, srv.URL)
	runClock(ctx, s, time.Second, os.Stdout)
	fmt.Println("stack: stopping")
}

// storyEnd is the story's last arrival or tick.
func storyEnd(steps []client.Step) time.Time {
	var end time.Time
	for _, st := range steps {
		for _, at := range []time.Time{st.Arrival, st.Tick} {
			if at.After(end) {
				end = at
			}
		}
	}
	return end.UTC()
}

// runClock moves the stack's test clock with the real one and fires the
// scheduler's due jobs, until ctx ends. A jump made through the console
// stands: the clock goes on from there.
func runClock(ctx context.Context, s *Stack, poll time.Duration, out io.Writer) {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	offset := time.Until(s.Now())
	_, _ = s.Scheduler.Due(ctx) // records the starting minute
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			// Whole seconds, so that the services see 20:31:00, not
			// 20:31:00.000008687.
			want := now.Add(offset).Truncate(time.Second)
			if cur := s.Now(); cur.After(want) {
				offset = cur.Sub(now) // the console moved it: go on from there
				continue
			}
			// A console jump between Now and SetClock makes this step
			// fail (backwards); the next one goes on from the jump.
			_ = s.SetClock(want)
		}
		calls, err := s.Scheduler.Due(ctx)
		for _, c := range calls {
			fmt.Fprintln(out, callLine(c, err)) // err only for a call not answered
		}
	}
}

func upBanner(w io.Writer, s *Stack, consoleURL string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\nalpipe stack up (project %s)\n", s.Project)
	p("Clock: the story's, not today's: it started at %s (the last step of %s) and moves one second per second.\n", s.Now().Format("2006-01-02 15:04 MST"), upStory)
	p("       Every service reads it (ALPIPE_CLOCK_FILE); move it forward with curl -X POST '%s/clock?to=2026-03-14T22:00:00Z'.\n\n", consoleURL)
	fns := slices.Sorted(maps.Keys(s.Frontends))
	p("Services (the production binary, with Terraform's environment):\n")
	for _, fn := range fns {
		proc := s.Processes[fn]
		p("  %-17s %-17s %s  (process %s)\n", fn, proc.Service.Name, s.Frontends[fn].URL(), proc.URL())
	}
	p("Stand-ins:\n")
	p("  fake GCS          STORAGE_EMULATOR_HOST=%s  buckets %s\n", strings.TrimPrefix(s.StorageURL, "http://"), bucketsText(s.Buckets))
	p("  BigQuery fake     BIGQUERY_EMULATOR_HOST=%s  dataset %s (bqfake in front of the BigQuery emulator, which runs every query)\n", strings.TrimPrefix(s.BigQueryURL, "http://"), s.Dataset)
	p("  Firestore         FIRESTORE_EMULATOR_HOST=%s  database %s\n",
		os.Getenv("FIRESTORE_EMULATOR_HOST"), s.FirestoreDatabase)
	p("  Pub/Sub           PUBSUB_EMULATOR_HOST=%s  GOOGLE_CLOUD_PROJECT=%s\n", os.Getenv("PUBSUB_EMULATOR_HOST"), s.Project)
	for _, j := range s.Deployment.SchedulerJobs {
		p("  Cloud Scheduler   %s calls %s %s (%q in terraform/scheduler.tf), on the stack's clock\n", j.Name, s.Processes[j.Function].Service.Name, cronText(j.Schedule), j.Schedule)
	}
	p("\nTry:\n")
	p("  Orders (Pub/Sub pushes them to AggregateOrders). All of %s's orders arrive at once, at the stack's\n", upStory)
	p("  clock when you publish, not at their story arrival times: lag_seconds = the stack's clock - the event time, 2-3 h here.\n")
	p("  Within two watermark ticks (minutes) their EARLY panes are in BigQuery; once no order came for IDLE_TIMEOUT (5m) the watermark reaches the clock\n")
	p("  minus OUT_OF_ORDERNESS (10m) and closes their windows:\n")
	p("    PUBSUB_EMULATOR_HOST=%s go run ./cmd/alpipe publish --project %s %s\n", os.Getenv("PUBSUB_EMULATOR_HOST"), s.Project, upStory)
	if b, ok := s.Buckets["landing"]; ok {
		p("  A file drop (Eventarc delivers it to IngestCSV):\n")
		p("    curl -X POST --data-binary @testdata/exportaciones/2026/03/14/pedidos-erp.csv -H 'Content-Type: text/csv' \\\n      '%s/upload/storage/v1/b/%s/o?uploadType=media&name=exportaciones/2026/03/14/pedidos-erp.csv'\n", s.StorageURL, b)
	}
	p("  The dashboard, with the monitoring panel read from the services' log lines (data freshness, system lag,\n")
	p("  dead letters, backlog of the orders subscription): open %s/ in a browser on this machine.\n", consoleURL)
	p("  What BigQuery holds (the fake's tables and row counts, then a table's rows as JSON lines):\n")
	p("    curl -s %s/tables\n", consoleURL)
	p("    curl -s '%s/tables/%s?limit=20'\n", consoleURL, warehouse.VentasHoraPaisPaneles)
	p("  The ledger and window state are in Firestore (project %s, database %s).\n",
		s.Project, s.FirestoreDatabase)
	p("Ctrl-C stops it.\n\n")
}
