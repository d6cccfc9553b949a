package ledgertest

import (
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// testReleaseLeases: a process killed mid-attempt leaves a live lease and
// a held lock. Without proof of its death the next claimant waits for the
// lease to expire (production); ReleaseLeases, called by a process that
// alone opens the store, frees both at once and leaves finished records
// alone.
func testReleaseLeases(t *testing.T, l *ledger.Ledger) {
	ctx := t.Context()
	const lockName = "refresh/ventas_diarias_sku"
	killed := claim(t, l, key1, md5A, "killed", t0)
	wantDecision(t, killed, ledger.Proceed)
	if ok, err := l.Lock(ctx, lockName, "killed", t0, 5*time.Minute); err != nil || !ok {
		t.Fatalf("killed run's Lock = %v, %v", ok, err)
	}
	done := finish(t, l, claim(t, l, key2, md5B, "other", t0).Record, ledger.Done, t0)

	restart := t0.Add(time.Minute)
	wantDecision(t, claim(t, l, key1, md5A, "next", restart), ledger.Busy)
	if ok, err := l.Lock(ctx, lockName, "next", restart, 5*time.Minute); err != nil || ok {
		t.Fatalf("Lock of a live lock = %v, %v; want false", ok, err)
	}

	const why = "abandoned: its process died"
	n, err := l.ReleaseLeases(ctx, restart, why)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("ReleaseLeases released %d, want 2 (a record and a lock)", n)
	}
	next := claim(t, l, key1, md5A, "next", restart)
	wantDecision(t, next, ledger.Proceed)
	if next.Previous == nil || next.Previous.State != ledger.Failed || next.Previous.Owner != "killed" || next.Previous.Reason != why {
		t.Errorf("Previous = %+v, want the killed attempt, FAILED with reason %q", next.Previous, why)
	}
	if ok, err := l.Lock(ctx, lockName, "next", restart, 5*time.Minute); err != nil || !ok {
		t.Errorf("Lock after ReleaseLeases = %v, %v; want true", ok, err)
	}
	if got := get(t, l, key2); got.State != ledger.Done || !got.FinishedAt.Equal(done.FinishedAt) {
		t.Errorf("finished record after ReleaseLeases: %+v, want it unchanged", got)
	}
}
