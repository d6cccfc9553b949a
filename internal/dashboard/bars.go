package dashboard

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Warehouse is what the page reads of the warehouse: two named reads per
// refresh (warehouse.ReadNewestWindows and warehouse.ReadDiscardSummary).
type Warehouse interface {
	Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error)
}

// aggregationName is what an aggregation name may be (it also names tables
// and documents); another name is refused before anything is read.
var aggregationName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

func checkAggregation(name string) error {
	if !aggregationName.MatchString(name) {
		return fmt.Errorf("aggregation name %q: want letters, digits and '_'", name)
	}
	return nil
}

// readBars reads the newest windows of the chosen aggregation's view that
// pass the filter and start in rng. A date range reads all of its windows
// (at most MaxRangeDays of hours).
func readBars(ctx context.Context, src Source, f Filter, rng Range, d declared) ([]Bar, error) {
	if src.Warehouse == nil {
		return nil, errNotConfigured
	}
	if err := checkAggregation(src.Aggregation); err != nil {
		return nil, err
	}
	for _, p := range f.Paises {
		if !paisCode.MatchString(p) {
			return nil, fmt.Errorf("pais %q: want a two-letter country code such as ES", p)
		}
	}
	key, ok := warehouse.ViewKey(src.Aggregation)
	if !ok {
		return nil, fmt.Errorf("aggregation %s: not declared (internal/aggregation), so it has no view", src.Aggregation)
	}
	keys, err := f.keysFor(src.Aggregation, key)
	if err != nil {
		return nil, err
	}
	// Each aggregation's view is read by its own key column.
	q := warehouse.NewestWindows{View: src.Aggregation, Aggregation: src.Aggregation, Windows: src.Windows,
		From: rng.From, Until: rng.until(), Keys: keys}
	// Every window of the range, however many its period makes (96 of a
	// sliding hour every 15 minutes in the default 24 h). Sessions start
	// where their orders do, but a key's sessions at least a gap apart.
	spacing := d.spec.PeriodOrSize()
	if d.spec.Session() {
		spacing = d.spec.Gap / time.Duration(max(1, len(keys)))
	}
	q.Windows = max(q.Windows, int(DefaultRange/spacing))
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
