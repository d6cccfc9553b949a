package ticktest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/tick"
)

// Conformance holds a tick.FollowUp to the port's contract: every time
// scheduled is scheduled once, however often it is asked for. scheduled
// lists the times the backend holds.
func Conformance(t *testing.T, f tick.FollowUp, scheduled func() []time.Time) {
	t.Helper()
	ctx := context.Background()
	a := time.Date(2026, 3, 14, 17, 5, 30, 0, time.UTC)
	b := a.Add(time.Minute)
	for i, at := range []time.Time{a, a, b, a, b} {
		if err := f.Schedule(ctx, at); err != nil {
			t.Fatalf("Schedule #%d (%s): %v; a repeat must succeed", i, at, err)
		}
	}
	if diff := cmp.Diff([]time.Time{a, b}, scheduled()); diff != "" {
		t.Errorf("scheduled (-want +got):\n%s", diff)
	}
}
