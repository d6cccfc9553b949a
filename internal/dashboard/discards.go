package dashboard

import (
	"context"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Discards are the orders the stream did not count: invalid messages (dead
// letters) and orders that came after their window's allowed lateness
// (too-late drops, of this aggregation), with the newest of each.
type Discards struct {
	// Since bounds them: the counts and lists are of the discards received
	// since (processing time), the last DefaultRange.
	Since             time.Time `json:"since"`
	DeadLetters       int64     `json:"dead_letters"`
	TooLate           int64     `json:"too_late"`
	LatestDeadLetters []Discard `json:"latest_dead_letters"`
	LatestTooLate     []Discard `json:"latest_too_late"`
}

// Discard is one row of pedidos_descartados as the page lists it (the raw
// message stays in the warehouse: it may be a megabyte).
type Discard struct {
	PedidoID    string    `json:"pedido_id,omitempty"`
	Reason      string    `json:"reason"`
	EventTime   time.Time `json:"event_time,omitzero"`
	WindowStart time.Time `json:"window_start,omitzero"`
	ReceivedAt  time.Time `json:"received_at"`
}

// summary is the page's second and last read: in one statement (one
// BigQuery job per refresh, not four), the discard counts, the newest
// discards of each kind, and the countries the view holds in the range
// shown (the country filter's choices, which a chart filtered by country
// cannot tell).
type summary struct {
	discards  Discards
	countries []string
}

// readSummary reads the discards received since and the countries of the
// windows in rng: each part bounded on its table's partitioning column
// (received_at, window_start), whatever the person asked.
func readSummary(ctx context.Context, src Source, since time.Time, rng Range) (summary, error) {
	if src.Warehouse == nil {
		return summary{}, errNotConfigured
	}
	if err := checkAggregation(src.Aggregation); err != nil {
		return summary{}, err
	}
	s, err := warehouse.ReadDiscardSummary(ctx, src.Warehouse, warehouse.DiscardSummaryQuery{
		Aggregation: src.Aggregation, Latest: src.Latest, Since: since, From: rng.From, Until: rng.until(),
	})
	if err != nil {
		return summary{}, err
	}
	return summary{
		discards: Discards{Since: since, DeadLetters: s.DeadLetters, TooLate: s.TooLate,
			LatestDeadLetters: discardsOf(s.LatestDeadLetters), LatestTooLate: discardsOf(s.LatestTooLate)},
		countries: s.Countries,
	}, nil
}

func discardsOf(ds []warehouse.Discard) []Discard {
	out := make([]Discard, len(ds))
	for i, d := range ds {
		out[i] = Discard(d)
	}
	return out
}
