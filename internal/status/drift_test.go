package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
)

func TestDriftLines(t *testing.T) {
	t0 := time.Date(2026, 3, 20, 2, 0, 0, 0, time.UTC)
	rec := func(feed string, started time.Time, d *ledger.Drift) ledger.Record {
		return ledger.Record{Feed: feed, StartedAt: started, State: ledger.Done, Drift: d}
	}
	recs := []ledger.Record{ // newest first, as the ledger lists them
		rec("lineas_pedido", t0.Add(48*time.Hour), &ledger.Drift{Added: []string{"canal"}}),
		rec("lineas_pedido", t0.Add(24*time.Hour), nil),
		rec("lineas_pedido", t0, &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}),
		rec("opiniones", t0.Add(time.Hour), &ledger.Drift{Added: []string{"canal"}}),
		rec("lineas_pedido", t0.Add(-72*time.Hour), &ledger.Drift{Added: []string{"antigua"}}), // before since
	}
	want := []DriftLine{
		{Feed: "lineas_pedido", Change: "added", Column: "canal", Files: 2, FirstSeen: t0, LastSeen: t0.Add(48 * time.Hour)},
		{Feed: "opiniones", Change: "added", Column: "canal", Files: 1, FirstSeen: t0.Add(time.Hour), LastSeen: t0.Add(time.Hour)},
		{Feed: "lineas_pedido", Change: "missing", Column: "cliente_id", Files: 1, FirstSeen: t0, LastSeen: t0},
	}
	if diff := cmp.Diff(want, driftLines(recs, t0.Add(-time.Hour))); diff != "" {
		t.Errorf("drift lines (-want +got):\n%s", diff)
	}
	if got := driftLines(recs[1:2], t0); got != nil {
		t.Errorf("no drift gives %v, want nil (omitted from the JSON)", got)
	}
}
