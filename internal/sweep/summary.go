package sweep

import (
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// Outcomes of a found object.
const (
	Ingested = "ingested" // this run finished it (DONE, REJECTED, DUPLICATE or SKIPPED)
	Failed   = "failed"   // this run's attempt failed; the next run retries it
	Skipped  = "skipped"  // not attempted: claimed by a live attempt, over the limit, or cancelled
)

// Summary is what a run found and did: Found = Ingested + Failed + Skipped.
// Found > 0 means events were lost or are failing; it is what the alert
// watches.
type Summary struct {
	Found    int           `json:"found"`
	Ingested int           `json:"ingested"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	Objects  []FoundObject `json:"objects"`
	// Busy: another run held the lock; this one did nothing.
	Busy bool `json:"busy,omitempty"`
}

// FoundObject is one object the run found without a final ledger record.
type FoundObject struct {
	Object  string    `json:"object"` // gs://bucket/name#generation
	Created time.Time `json:"created"`
	// Found is why it needed the sweep (the ledger as the run found it).
	Found   string `json:"found"`
	Outcome string `json:"outcome"`
	// State is the ledger state after the run's attempt (as found when
	// not attempted); Reason explains the outcome.
	State  ledger.State `json:"state,omitempty"`
	Reason string       `json:"reason,omitempty"`
}

func (s *Summary) count() {
	s.Found = len(s.Objects)
	s.Ingested, s.Failed, s.Skipped = 0, 0, 0
	for _, o := range s.Objects {
		switch o.Outcome {
		case Ingested:
			s.Ingested++
		case Failed:
			s.Failed++
		default:
			s.Skipped++
		}
	}
}
