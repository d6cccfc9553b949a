package reingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/reingest"
)

// TestRequeueLongName re-queues the quarantine of a file whose name is near
// the limits (issue 23 item 2), on objects stored as files: the requeued
// name must fit there too, and a quarantine name that ingest shortened
// cannot say which file it came from once its metadata is gone.
func TestRequeueLongName(t *testing.T) {
	source := "exportaciones/2026/03/14/" + strings.Repeat("q", 222) + ".csv"
	tests := []struct {
		name string
		// dropMeta uploads the fixed file over the quarantine object, as an
		// edited copy does, losing its metadata.
		dropMeta bool
		wantErr  string
	}{
		{name: "fixed in a local copy"},
		{name: "metadata lost", dropMeta: true, wantErr: "cannot be read back from a shortened name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newDiskRig(t)
			q := seedQuarantineAs(t, r, source)
			fixed := fixDate(t, r.read(quarantine, q))
			req := reingest.RequeueRequest{Bucket: quarantine, Name: q, Rows: strings.NewReader(fixed)}
			if tt.dropMeta {
				r.put(quarantine, q, fixed, nil)
				req.Rows = nil
			}
			rq := &reingest.Requeue{Objects: r.gcs, Ingest: reingest.Direct{Service: r.svc}, Feeds: r.feeds, LandingBucket: landing,
				Now: func() time.Time { return requeueTime }}
			res, err := rq.Run(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("requeue: %v (landed %s, source %s); want an error containing %q", err, res.Landing, res.Source, tt.wantErr)
				}
				if n := r.query("SELECT COUNT(*) FROM lineas_pedido")[0][0]; n != "1" {
					t.Errorf("%s rows loaded; want only the seed file's 1", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := reingest.RequeueName(source, requeueTime)
			if res.Record.State != ledger.Done || res.Rows != 3 || res.Record.Key.Object != want {
				t.Errorf("requeue: %s %s, %d rows; want DONE %s with 3 rows", res.Record.State, res.Record.Key, res.Rows, want)
			}
			if res.Source != "gs://"+landing+"/"+source {
				t.Errorf("source %s; want gs://%s/%s", res.Source, landing, source)
			}
		})
	}
}
