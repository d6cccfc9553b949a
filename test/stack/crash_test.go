package stack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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
	ctx := testContext(t, time.Minute)
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

	check(t, proc.Start(ctx))
	// The restarted process finds the dead attempt's lease and answers
	// non-2xx, so Eventarc keeps retrying; moving the clock past the lease
	// lets the next retry take over.
	lease, err := time.ParseDuration(proc.Service.Env["LEDGER_LEASE"])
	if err != nil {
		t.Fatalf("LEDGER_LEASE: %v", err)
	}
	setClock(t, s, s.Now().Add(lease+time.Minute))
	ev, err := s.Eventarc.Wait(ctx, landing, name, gen, waitTimeout)
	check(t, err)
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

// bigOrderLines is an order-lines export of n valid rows.
func bigOrderLines(n int) []byte {
	var b strings.Builder
	b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n")
	for i := range n {
		fmt.Fprintf(&b, "PED-DRAIN-%07d,1,2026-03-14,MOCH-40L-AZ,2,\"89,90\",CLI-00958,ES\n", i)
	}
	return []byte(b.String())
}

// TestSIGTERMDrainsThenRedeliveryLoadsOnce sends IngestCSV the SIGTERM
// Cloud Run sends at every scale-in and deploy while it loads a file,
// holding the load job's answer past the grace: the process stops
// accepting, waits SHUTDOWN_GRACE, cancels the ingest, which records its
// failure and releases its ledger lease, and exits within Cloud Run's
// 10 s. Restarted, the service takes Eventarc's next redelivery at once
// (not 409 until the 10-minute lease expires) and the rows are loaded
// exactly once.
func TestSIGTERMDrainsThenRedeliveryLoadsOnce(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, 2*time.Minute)
	proc := s.Processes["IngestCSV"]
	// The held answer, not the file's size, keeps the load in flight. The
	// size is small because the refresh that follows runs on the BigQuery
	// emulator, whose joins are quadratic: the aggregate's newest-generation
	// join over one date's 1,000 rows takes 20-30 s there, 20,000 hours.
	const rows = 200
	inserted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.OnBigQuery(func(r *http.Request, body []byte) {
		if isLoadInsert(r, body, "lineas_pedido") {
			once.Do(func() {
				close(inserted)
				<-release // the job is inserted; its answer waits
			})
		}
	})
	defer once.Do(func() {})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	const name = "exportaciones/2026/03/14/pedidos-erp-grande.csv"
	landing := s.Buckets["landing"]
	gen := upload(ctx, t, s, name, bigOrderLines(rows))
	select {
	case <-inserted:
	case <-time.After(waitTimeout):
		t.Fatal("the load job never reached BigQuery")
	}

	sigterm := time.Now()
	if err := proc.Stop(); err != nil { // SIGTERM; SIGKILL after 10 s, as Cloud Run
		t.Fatalf("stop: %v", err)
	}
	stopped := time.Since(sigterm)
	close(release)
	out := proc.Output()
	if err := proc.exitErr(); err != nil {
		t.Errorf("the process exited with %v after SIGTERM, want 0", err)
	}
	shutdownLines := func(prefix string) []map[string]any {
		return logEntries(t, out, func(m map[string]any) bool {
			msg, _ := m["message"].(string)
			return strings.HasPrefix(msg, prefix)
		})
	}
	started, finished := shutdownLines("shutdown started"), shutdownLines("shutdown finished")
	if len(started) != 1 || len(finished) != 1 {
		t.Fatalf("want one shutdown start and end logged; output:\n%s", out)
	}
	end := finished[0]
	if end["in_flight"] != 1.0 || end["cut"] != 1.0 || end["unfinished"] != 0.0 {
		t.Errorf("shutdown end %v, want 1 in flight, cut, none unfinished", end)
	}
	if stopped >= 10*time.Second {
		t.Errorf("the process took %s to exit after SIGTERM; Cloud Run kills at 10 s", stopped)
	}
	key := ledger.Key{Bucket: landing, Object: name, Generation: gen}
	l := s.ledger(t)
	rec := record(ctx, t, l, key)
	if rec.State != ledger.Failed {
		t.Errorf("after the drain the ledger says %s (%s), want FAILED: the cut ingest records its failure", rec.State, rec.Reason)
	}

	check(t, proc.Start(ctx))
	restarted := time.Since(sigterm)
	ev, err := s.Eventarc.Wait(ctx, landing, name, gen, time.Minute)
	check(t, err)
	acked := time.Since(sigterm)
	if !ev.Acked {
		t.Fatalf("Eventarc gave the event up: %v", ev.Attempts)
	}
	if acked > time.Minute {
		t.Errorf("the redelivery was acknowledged %s after SIGTERM, want within a minute", acked)
	}
	if slices.Contains(ev.Attempts, http.StatusConflict) {
		t.Errorf("a redelivery was answered 409 (the dead attempt's lease held): %v", ev.Attempts)
	}
	rec = record(ctx, t, l, key)
	if rec.State != ledger.Done || rec.Counts.Loaded != rows {
		t.Errorf("ledger: %s, %d loaded; want DONE, %d loaded", rec.State, rec.Counts.Loaded, rows)
	}
	if got := len(s.BigQuery.Rows("lineas_pedido")); got != rows {
		t.Errorf("lineas_pedido holds %d rows, want the file's %d exactly once", got, rows)
	}
	t.Logf("SIGTERM -> exit %s (shutdown: %v in flight, %v drained, %v cut, %v unfinished, %vms); restarted at %s; redelivery acknowledged %s after SIGTERM; deliveries %v; ledger attempt %d",
		stopped.Round(time.Millisecond), end["in_flight"], end["drained"], end["cut"], end["unfinished"], end["elapsed_ms"],
		restarted.Round(time.Millisecond), acked.Round(time.Millisecond), ev.Attempts, rec.Attempt)
}
