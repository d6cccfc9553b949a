package ingest_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/reingest"
)

const ordersHeader = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n"

func orderLine(i int) string {
	return fmt.Sprintf("PED-%05d,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",CLI-1,ES", i)
}

// TestLongLandingNameQuarantines: under the longest name its contract
// accepts in one folder, on the fake storing files as `alpipe serve` does,
// a file still quarantines its rejected rows and ends DONE.
func TestLongLandingNameQuarantines(t *testing.T) {
	r := newRigOn(t, ingesttest.NewDiskParts(t, landing, quarantine), nil, logging.Discard())
	ctx := context.Background()
	name := "exportaciones/2026/03/14/" + strings.Repeat("q", 222) + ".csv"
	content := strings.Replace(readSeed(t, seedOrders), "PED-2026-0314-0002", "PED-2026-0314-0902", 1)
	obj := r.upload(name, content)
	rec, err := r.svc.Ingest(ctx, obj)
	if err != nil {
		t.Errorf("Ingest: %.200s...", err)
	}
	got := []any{rec.State, countsOf(rec), len(r.quarantineRows(rec.Quarantine)) - 1,
		r.rows("lineas_pedido")}
	if diff := cmp.Diff([]any{ledger.Done, counts{4, 1, 3}, 3, "1"}, got); diff != "" {
		t.Fatalf("state, counts, rows quarantined, rows loaded (-want +got):\n%s", diff)
	}
	again, err := r.svc.Ingest(ctx, obj) // the sweep's redelivery
	if err != nil || again.State != ledger.Done {
		t.Errorf("redelivery = %s, %v; want DONE", again.State, err)
	}
}

// TestFailedAttemptCountsOnlyWhatCommitted: an attempt whose quarantine
// cannot be written, or whose load is cut after reading every row, loads
// nothing, says why, and its FAILED record (returned and stored) counts what
// was read and only what committed.
func TestFailedAttemptCountsOnlyWhatCommitted(t *testing.T) {
	tests := []struct {
		name   string
		inject func(*faults)
		reason string
	}{
		{"quarantine write fails",
			func(f *faults) { f.quarantineClose = errors.New("file name too long") },
			"write quarantine: file name too long"},
		{"load cut after every row",
			func(f *faults) { f.loadCut = errors.New("load job cut by its deadline") },
			"load into lineas_pedido: load job cut by its deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := context.Background()
			obj := r.upload(seedOrders, readSeed(t, seedOrders))
			tt.inject(&r.faults)
			rec, err := r.svc.Ingest(ctx, obj)
			if err == nil {
				t.Fatal("Ingest succeeded despite the fault")
			}
			stored, ok, gerr := r.Ledger.Get(ctx, obj.Key())
			if gerr != nil || !ok {
				t.Fatalf("ledger Get = %v, %v", ok, gerr)
			}
			for _, c := range []ledger.Record{rec, stored} {
				// Quarantined rows count only when their quarantine object was
				// committed, and then it holds exactly them.
				var inObject int64
				if c.Quarantine != "" {
					inObject = int64(len(r.quarantineRows(c.Quarantine)) - 1)
				}
				got := []any{c.State, c.Reason, c.Counts.Read, c.Counts.Loaded, c.Counts.Quarantined - inObject}
				want := []any{ledger.Failed, tt.reason, int64(4), int64(0), int64(0)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("state, reason, read, loaded, quarantined not in the quarantine object "+
						"(-want +got):\n%s", diff)
				}
			}
			if got := r.rows("lineas_pedido"); got != "0" {
				t.Errorf("lineas_pedido rows = %s after a failed attempt, want 0", got)
			}
		})
	}
}

// TestStrayQuoteLosesNoRow: a row with an unclosed quote is rejected alone,
// the rows after it load, and re-queueing it fixed restores it.
func TestStrayQuoteLosesNoRow(t *testing.T) {
	r := newRig(t) // MaxRecordBytes 4096
	ctx := context.Background()
	const valid = 200
	stray := "PED-00000,1,2026-03-14,MOCH-40L-AZ,1,\"89,90,CLI-1,ES"
	var sb strings.Builder
	sb.WriteString(ordersHeader + stray + "\r\n")
	for i := 1; i <= valid; i++ {
		sb.WriteString(orderLine(i) + "\r\n")
	}
	rec := r.ingest(r.upload(seedOrders, sb.String()))
	got := []any{rec.State, rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined, rec.Counts.Rejects}
	want := []any{ledger.Done, int64(valid + 1), int64(valid), int64(1), map[string]int64{"unterminated_quote": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("state, read, loaded, quarantined, rejects (-want +got):\n%s", diff)
	}
	q := r.quarantineRows(rec.Quarantine)
	if len(q) != 2 || q[1][0] != "2" || q[1][1] != "unterminated_quote" || q[1][3] != stray {
		t.Fatalf("quarantine = %q, want one row: line 2, unterminated_quote, the stray line whole", q)
	}

	// A person closes the quote in a local copy and re-queues it.
	var fixed strings.Builder
	w := csv.NewWriter(&fixed)
	_ = w.Write(ingest.QuarantineHeader)
	_ = w.Write([]string{q[1][0], q[1][1], q[1][2], strings.Replace(stray, `"89,90,`, `"89,90",`, 1)})
	w.Flush()
	rq := &reingest.Requeue{Objects: r.GCS, Ingest: reingest.Direct{Service: r.svc}, Feeds: r.Feeds,
		LandingBucket: landing}
	res, err := rq.Run(ctx, reingest.RequeueRequest{Bucket: quarantine, Name: rec.Quarantine, Rows: strings.NewReader(fixed.String())})
	if err != nil {
		t.Fatalf("requeue: %v", err)
	}
	if res.Record.State != ledger.Done || res.Record.Counts.Loaded != 1 {
		t.Errorf("requeue record = %s loaded %d, want DONE 1", res.Record.State, res.Record.Counts.Loaded)
	}
	if got := r.rows("lineas_pedido"); got != fmt.Sprint(valid+1) {
		t.Errorf("lineas_pedido rows = %s after the requeue, want %d: every row of the file", got, valid+1)
	}
}

// TestLongRecordQuarantinedWhole: a line longer than MaxRecordBytes goes to
// quarantine whole, streamed; the line after it loads.
func TestLongRecordQuarantinedWhole(t *testing.T) {
	r := newRig(t) // MaxRecordBytes 4096
	long := "PED-00001,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",CLI-" + strings.Repeat("x\"y,", 3000) + ",ES"
	rec := r.ingest(r.upload(seedOrders, ordersHeader+long+"\r\n"+orderLine(2)+"\r\n"))
	got := []any{rec.State, countsOf(rec), r.quarantineRows(rec.Quarantine)[1:]}
	quarantined := [][]string{{"2", "malformed_record", "record longer than 4096 bytes", long}}
	want := []any{ledger.Done, counts{2, 1, 1}, quarantined}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state, counts, quarantine rows: the line whole (-want +got):\n%.2000s", diff)
	}
}
