package dashboard

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// aggregationName is what may name tables and documents; another name is
// refused before anything is read.
var aggregationName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

func checkAggregation(name string) error {
	if !aggregationName.MatchString(name) {
		return fmt.Errorf("aggregation name %q: want letters, digits and '_'", name)
	}
	return nil
}

// readBars reads the windows of the chosen view that pass the filter and
// start in rng.
func readBars(ctx context.Context, src Source, f Filter, rng Range, d declared) ([]Bar, error) {
	if src.Warehouse == nil {
		return nil, errNotConfigured
	}
	// d is the declaration of src.Aggregation, whose name declarationOf
	// checked; f's countries are ParseFilter's, checked there.
	keys, err := f.keysFor(src.Aggregation, d.key)
	if err != nil {
		return nil, err
	}
	// Every window of the range, however many its period makes. A key's
	// sessions start at least a gap apart.
	spacing := d.spec.PeriodOrSize()
	if d.spec.Session() {
		spacing = d.spec.Gap / time.Duration(max(1, len(keys)))
	}
	q := warehouse.NewestWindows{View: src.Aggregation, Aggregation: src.Aggregation, Keys: keys,
		Windows: max(DefaultWindows, int(DefaultRange/spacing)), From: rng.From, Until: rng.until()}
	if f.ranged() {
		q.Windows = max(q.Windows, MaxRangeDays*int(24*time.Hour/spacing))
	}
	sales, err := warehouse.ReadNewestWindows(ctx, src.Warehouse, q)
	if err != nil {
		return nil, err
	}
	bars := make([]Bar, len(sales))
	for i, s := range sales {
		bars[i] = Bar(s)
	}
	return bars, nil
}

// Discards are the invalid messages (dead letters) and this aggregation's
// too-late drops received since Since, with the newest of each.
type Discards struct {
	Since             time.Time `json:"since"`
	DeadLetters       int64     `json:"dead_letters"`
	TooLate           int64     `json:"too_late"`
	LatestDeadLetters []Discard `json:"latest_dead_letters"`
	LatestTooLate     []Discard `json:"latest_too_late"`
}

// Discard is one row of pedidos_descartados as the page lists it (the raw
// message stays in the warehouse: it may be a megabyte).
type Discard = warehouse.Discard

// readSummary is the page's second read, one BigQuery job rather than
// four: the discards, and the countries the view holds in the range (the
// country filter's choices, which a chart filtered by country cannot tell).
func readSummary(ctx context.Context, src Source, since time.Time, rng Range) (
	Discards, []string, error,
) {
	if src.Warehouse == nil {
		return Discards{}, nil, errNotConfigured
	}
	if err := checkAggregation(src.Aggregation); err != nil {
		return Discards{}, nil, err
	}
	s, err := warehouse.ReadDiscardSummary(ctx, src.Warehouse, warehouse.DiscardSummaryQuery{
		Aggregation: src.Aggregation, Latest: src.Latest, Since: since, From: rng.From, Until: rng.until(),
	})
	if err != nil {
		return Discards{}, nil, err
	}
	d := Discards{Since: since, DeadLetters: s.DeadLetters, TooLate: s.TooLate,
		LatestDeadLetters: discardsOf(s.LatestDeadLetters), LatestTooLate: discardsOf(s.LatestTooLate)}
	return d, s.Countries, nil
}

// discardsOf never answers null: the page reads [] as "none".
func discardsOf(ds []warehouse.Discard) []Discard { return append([]Discard{}, ds...) }
