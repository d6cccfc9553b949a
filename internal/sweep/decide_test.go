package sweep

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

var now = time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

func TestExamined(t *testing.T) {
	p := policy{window: 72 * time.Hour, grace: 30 * time.Minute}
	tests := []struct {
		name string
		a    objects.Attrs
		want bool
	}{
		{name: "inside the window", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(-2 * time.Hour)}, want: true},
		{name: "exactly the grace period old", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(-30 * time.Minute)}, want: true},
		{name: "exactly the window old", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(-72 * time.Hour)}, want: true},
		{name: "younger than the grace period: Eventarc's", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(-29 * time.Minute)}},
		{name: "created in our future", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(time.Hour)}},
		{name: "older than the window", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10, Created: now.Add(-73 * time.Hour)}},
		{name: "folder placeholder", a: objects.Attrs{Name: "exportaciones/2026/", Created: now.Add(-2 * time.Hour)}},
		{name: "empty file is examined", a: objects.Attrs{Name: "exportaciones/vacio.csv", Created: now.Add(-2 * time.Hour)}, want: true},
		{name: "no creation time", a: objects.Attrs{Name: "exportaciones/p.csv", Size: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.examined(tt.a, now); got != tt.want {
				t.Errorf("examined = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	p := policy{window: 72 * time.Hour, grace: 30 * time.Minute}
	type result struct {
		Verdict Verdict
		Why     string
	}
	tests := []struct {
		name string
		rec  ledger.Record
		ok   bool
		want result
	}{
		{name: "no record", want: result{Sweep, "no ledger record: no event reached the ingest"}},
		{name: "done", ok: true, rec: ledger.Record{State: ledger.Done}, want: result{Ignore, ""}},
		{name: "rejected", ok: true, rec: ledger.Record{State: ledger.Rejected}, want: result{Ignore, ""}},
		{name: "duplicate", ok: true, rec: ledger.Record{State: ledger.Duplicate}, want: result{Ignore, ""}},
		{name: "skipped: no contract", ok: true, rec: ledger.Record{State: ledger.Skipped}, want: result{Ignore, ""}},
		{name: "failed", ok: true, rec: ledger.Record{State: ledger.Failed, Reason: "load: warehouse unavailable"}, want: result{Sweep, "last attempt FAILED: load: warehouse unavailable"}},
		{name: "live claim", ok: true, rec: ledger.Record{State: ledger.InProgress, LeaseUntil: now.Add(time.Minute)},
			want: result{Leave, "an attempt holds it until 2026-03-15T12:01:00Z"}},
		{name: "expired claim", ok: true, rec: ledger.Record{State: ledger.InProgress, LeaseUntil: now.Add(-time.Second)}, want: result{Sweep, "an attempt's lease expired unfinished"}},
		{name: "claim expiring now", ok: true, rec: ledger.Record{State: ledger.InProgress, LeaseUntil: now}, want: result{Sweep, "an attempt's lease expired unfinished"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, why := p.verdict(tt.rec, tt.ok, now)
			if diff := cmp.Diff(tt.want, result{v, why}); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDedupePrefixes(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "none is the whole bucket", want: []string{""}},
		{name: "disjoint kept", in: []string{"exportaciones/", "erp/"}, want: []string{"exportaciones/", "erp/"}},
		{name: "covered dropped", in: []string{"exportaciones/2026/", "exportaciones/"}, want: []string{"exportaciones/"}},
		{name: "repeated once", in: []string{"exportaciones/", "exportaciones/"}, want: []string{"exportaciones/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, dedupe(tt.in)); diff != "" {
				t.Errorf("dedupe (-want +got):\n%s", diff)
			}
		})
	}
}
