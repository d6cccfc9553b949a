package stack

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"testing"
	"time"
)

// TestUp keeps a stack running on the real clock for manual use, printing
// where everything is, until interrupted: `scripts/stack.sh up`. Without
// STACK_UP=1 it skips.
func TestUp(t *testing.T) {
	if os.Getenv("STACK_UP") == "" {
		t.Skip("STACK_UP=1 not set: scripts/stack.sh up keeps the stack running")
	}
	skipWithoutEmulators(t)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s, err := Start(ctx, Options{Binary: binary, Output: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("\nalpipe stack up (project %s, real clock)\n", s.Project)
	var fns []string
	for fn := range s.Frontends {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	for _, fn := range fns {
		p := s.Processes[fn]
		fmt.Printf("  %-17s %-17s %s  (process %s)\n", fn, p.Service.Name, s.Frontends[fn].URL(), p.URL())
	}
	fmt.Printf("  fake GCS          STORAGE_EMULATOR_HOST=%s  buckets %v\n", s.StorageURL[len("http://"):], s.Buckets)
	fmt.Printf("  BigQuery fake     BIGQUERY_EMULATOR_HOST=%s  dataset %s\n", s.BigQueryURL[len("http://"):], s.Dataset)
	fmt.Printf("  Firestore         FIRESTORE_EMULATOR_HOST=%s  database %s\n", os.Getenv("FIRESTORE_EMULATOR_HOST"), s.Database)
	fmt.Printf("  Pub/Sub           PUBSUB_EMULATOR_HOST=%s  GOOGLE_CLOUD_PROJECT=%s\n", os.Getenv("PUBSUB_EMULATOR_HOST"), s.Project)
	fmt.Printf("  Cloud Scheduler   jobs %v, every minute of the real clock\n", s.Scheduler.Jobs())
	fmt.Printf("\nA file drop (Eventarc delivers it to IngestCSV):\n  curl -X POST --data-binary @testdata/exportaciones/2026/03/14/pedidos-erp.csv -H 'Content-Type: text/csv' \\\n    '%s/upload/storage/v1/b/%s/o?uploadType=media&name=exportaciones/2026/03/14/pedidos-erp.csv'\n", s.StorageURL, s.Buckets["landing"])
	fmt.Printf("Orders (pushed to AggregateOrders):\n  PUBSUB_EMULATOR_HOST=%s go run ./cmd/alpipe publish --project %s testdata/pedidos/historia.jsonl\n", os.Getenv("PUBSUB_EMULATOR_HOST"), s.Project)
	fmt.Printf("Rows are in the BigQuery fake's memory; the ledger and window state in Firestore (project %s, database %s).\n", s.Project, s.Database)
	fmt.Println("Ctrl-C stops it.")
	s.Scheduler.Run(ctx, time.Second, func(c Call, err error) {
		fmt.Printf("scheduler: %s at %s: HTTP %d %v\n", c.Job, c.At.Format(time.TimeOnly), c.Status, err)
	})
}
