package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// isLoadInsert reports whether a BigQuery request inserts a load job into
// table.
func isLoadInsert(r *http.Request, body []byte, table string) bool {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/jobs") {
		return false
	}
	var job struct {
		Configuration struct {
			Load *struct {
				DestinationTable struct {
					TableID string `json:"tableId"`
				} `json:"destinationTable"`
			} `json:"load"`
		} `json:"configuration"`
	}
	return json.Unmarshal(body, &job) == nil && job.Configuration.Load != nil && job.Configuration.Load.DestinationTable.TableID == table
}

// TestCrashMidLoadLoadsOnce kills the IngestCSV process (SIGKILL) right
// after its load job reached BigQuery and before it could record the
// outcome, restarts it, and lets Eventarc redeliver: once the dead
// attempt's lease has expired on the test clock, the redelivery takes the
// file over, and the rows are in BigQuery exactly once.
func TestCrashMidLoadLoadsOnce(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proc := s.Processes["IngestCSV"]
	killed := make(chan struct{})
	var once sync.Once
	s.OnBigQuery(func(r *http.Request, body []byte) {
		if isLoadInsert(r, body, "lineas_pedido") {
			once.Do(func() {
				if err := proc.Kill(); err != nil {
					t.Errorf("kill: %v", err)
				}
				close(killed)
			})
		}
	})

	const name = "exportaciones/2026/03/14/pedidos-erp.csv"
	landing := s.Buckets["landing"]
	gen := upload(ctx, t, s, name, read(t, name))
	select {
	case <-killed:
	case <-time.After(waitTimeout):
		t.Fatal("the load job never reached BigQuery")
	}
	key := ledger.Key{Bucket: landing, Object: name, Generation: gen}
	l := s.ledger(t)
	rec := record(ctx, t, l, key)
	if rec.State.Final() {
		t.Fatalf("after the crash the ledger already says %s; the crash came too late to prove anything", rec.State)
	}

	if err := proc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The restarted process finds the dead attempt's lease and answers
	// non-2xx, so Eventarc keeps retrying; moving the clock past the lease
	// lets the next retry take over.
	lease, err := time.ParseDuration(proc.Service.Env["LEDGER_LEASE"])
	if err != nil {
		t.Fatalf("LEDGER_LEASE: %v", err)
	}
	setClock(t, s, s.Now().Add(lease+time.Minute))
	ev, err := s.Eventarc.Wait(ctx, landing, name, gen, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Acked {
		t.Fatalf("Eventarc gave the event up: %v", ev.Attempts)
	}
	if ev.Attempts[0]/100 == 2 {
		t.Errorf("first delivery acknowledged (%v), yet the process was killed under it", ev.Attempts)
	}

	rec = record(ctx, t, l, key)
	if rec.State != ledger.Done || rec.Counts.Loaded != 1 || rec.Attempt < 2 {
		t.Errorf("ledger: %s, %d loaded, attempt %d; want DONE, 1 loaded, a second attempt", rec.State, rec.Counts.Loaded, rec.Attempt)
	}
	rows := s.BigQuery.Rows("lineas_pedido")
	if len(rows) != 1 {
		t.Errorf("lineas_pedido holds %d rows, want the file's 1 valid row exactly once: %v", len(rows), rows)
	}
	loads := 0
	for _, j := range s.BigQuery.Jobs() {
		if j.Config.Load != nil && j.Error == nil {
			loads++
		}
	}
	if loads != 1 {
		t.Errorf("%d successful load jobs, want 1 (the retry must reuse the job ID)", loads)
	}
	t.Logf("deliveries: %v; ledger attempt %d", ev.Attempts, rec.Attempt)
}
