package sweep

import (
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

// Verdict is what a sweep does with one listed object.
type Verdict int

const (
	// Ignore: not the sweeper's business (outside the window, still
	// Eventarc's, a folder placeholder, or finished).
	Ignore Verdict = iota + 1
	// Leave: found unfinished, but a live attempt holds its claim; that
	// attempt records the outcome.
	Leave
	// Sweep: found unfinished and unclaimed (no record, FAILED, or a lease
	// that expired): ingest it.
	Sweep
)

func (v Verdict) String() string {
	switch v {
	case Ignore:
		return "ignore"
	case Leave:
		return "leave"
	case Sweep:
		return "sweep"
	}
	return "verdict(?)"
}

// policy is the part of Options the decisions read.
type policy struct {
	window, grace time.Duration
}

// examined reports whether a is old enough to be missed by its events and
// young enough to be swept: created in [now-window, now-grace]. Only those
// cost a ledger read.
func (p policy) examined(a objects.Attrs, now time.Time) bool {
	if a.Size == 0 && strings.HasSuffix(a.Name, "/") {
		return false // a console's "folder/" placeholder
	}
	if a.Created.IsZero() {
		return false
	}
	age := now.Sub(a.Created)
	// Younger than the grace period, Eventarc is still delivering (its
	// first attempts and backoff); a negative age is a clock ahead of ours.
	return age >= p.grace && age <= p.window
}

// verdict decides for an examined object from its ledger record (ok false:
// none). The final states are those the ingest acknowledges an event for.
func (p policy) verdict(rec ledger.Record, ok bool, now time.Time) (Verdict, string) {
	switch {
	case !ok:
		return Sweep, "no ledger record: no event reached the ingest"
	case rec.State.Final():
		return Ignore, ""
	case rec.State == ledger.InProgress && now.Before(rec.LeaseUntil):
		return Leave, "an attempt holds it until " + rec.LeaseUntil.UTC().Format(time.RFC3339)
	case rec.State == ledger.InProgress:
		return Sweep, "an attempt's lease expired unfinished"
	default:
		reason := "last attempt " + string(rec.State)
		if rec.Reason != "" {
			reason += ": " + rec.Reason
		}
		return Sweep, reason
	}
}
