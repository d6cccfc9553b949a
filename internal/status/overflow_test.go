package status_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/status"
)

// records is a ledger of fixed records, newest first.
type records []ledger.Record

func (r records) List(context.Context) ([]ledger.Record, error) { return r, nil }

// TestDoneWithAReasonNeedsAttention: a file that loaded but whose refresh
// left a daily sum out of range ends DONE with that as its reason; the
// report lists it with the files to act on, naming the date and SKU.
func TestDoneWithAReasonNeedsAttention(t *testing.T) {
	const overflow = `aggregate ventas_diarias_sku: sums out of range (1), their groups left out: 2026-03-14 sku="MOCH-40L-AZ" importe=100000000000000000000000000000.999999999`
	rec := func(name string, state ledger.State, reason string, started time.Time) ledger.Record {
		return ledger.Record{Key: ledger.Key{Bucket: landing, Object: name, Generation: 1}, State: state, Feed: "lineas_pedido", Attempt: 1, StartedAt: started, FinishedAt: started.Add(time.Minute), Reason: reason}
	}
	src := status.Sources{
		Ledger: records{
			rec("exportaciones/2026/03/14/b.csv", ledger.Done, "", morning.Add(-time.Hour)),
			rec("exportaciones/2026/03/14/a.csv", ledger.Done, overflow, morning.Add(-2*time.Hour)),
			rec("exportaciones/2026/03/01/viejo.csv", ledger.Done, overflow, morning.Add(-72*time.Hour)), // before Since
		},
		Now: func() time.Time { return morning },
	}
	rep := status.BuildReport(context.Background(), src, status.Options{})
	var got []string
	for _, l := range rep.Files.Attention {
		got = append(got, string(l.State)+" "+l.Object+": "+l.Reason)
	}
	want := []string{"DONE gs://alpinashop-catalogo/exportaciones/2026/03/14/a.csv#1: " + overflow}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attention (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := status.WriteText(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if line := "DONE  gs://alpinashop-catalogo/exportaciones/2026/03/14/a.csv#1  attempt 1: " + overflow; !strings.Contains(buf.String(), line) {
		t.Errorf("text report lacks %q:\n%s", line, buf.String())
	}
}
