package ingest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestDeadlineStillReleasesTheClaim: an attempt cut by its deadline records
// FAILED on a context of its own, so the redelivery proceeds at once.
func TestDeadlineStillReleasesTheClaim(t *testing.T) {
	r := newRigWith(t, func(c *ingest.Config) { c.Deadline = 50 * time.Millisecond }, logging.Discard())
	ctx := context.Background()
	obj := r.upload(seedOrders, readSeed(t, seedOrders))
	r.hangLoad.Store(true)

	started := time.Now()
	_, err := r.svc.Ingest(ctx, obj)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ingest error = %v, want the deadline's", err)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("Ingest took %s past a 50ms deadline", took)
	}
	rec, ok, err := r.Ledger.Get(ctx, obj.Key())
	if err != nil || !ok {
		t.Fatalf("ledger record: ok=%v err=%v", ok, err)
	}
	if rec.State != ledger.Failed {
		t.Errorf("ledger state = %s, want FAILED (claim released)", rec.State)
	}
	if len(r.finishes) != 1 {
		t.Fatalf("Finish calls = %+v, want one", r.finishes)
	}
	f := r.finishes[0]
	if f.err != nil || !f.hasDeadline || f.left <= 0 || f.left > ingest.FinishTimeout {
		t.Errorf("Finish context: err=%v deadline=%v left=%s; want alive with at most %s left", f.err, f.hasDeadline, f.left, ingest.FinishTimeout)
	}

	// No waiting for the lease: the next delivery takes the claim at once.
	claim, err := r.Ledger.Claim(ctx, obj.Key(), obj.MD5, "next-delivery", r.clock.Now())
	if err != nil || claim.Decision != ledger.Proceed {
		t.Fatalf("claim after the cut attempt = %v, %v; want %v", claim.Decision, err, ledger.Proceed)
	}
}
