// Package dashboard is the local operator's page: hourly sales per country
// from the dashboard view (each bar marked with the timing of its latest
// pane), the watermark and its lag, and the last ingested files with their
// loaded and quarantined counts. The page is static (embedded HTML, CSS and
// a little JavaScript, no framework) and refreshes itself from a JSON
// snapshot, so the server does no rendering and the JSON is what tests pin.
package dashboard

import (
	"context"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Ledger lists the ingest ledger's records, newest first; *ledger.Ledger is
// one.
type Ledger interface {
	List(ctx context.Context) ([]ledger.Record, error)
}

// WatermarkReader reads an aggregation's current watermark; the zero time
// means no order has been accepted yet.
type WatermarkReader interface {
	Watermark(ctx context.Context, aggregation string) (time.Time, error)
}

// WatermarkFunc adapts a function to WatermarkReader.
type WatermarkFunc func(ctx context.Context, aggregation string) (time.Time, error)

// Watermark calls f.
func (f WatermarkFunc) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	return f(ctx, aggregation)
}

var _ WatermarkReader = WatermarkFunc(nil)

// Source is where the page's figures come from. A nil port leaves its part
// of the page empty with a note, rather than failing the whole page, so the
// page still helps while one backend is down or not configured.
type Source struct {
	Warehouse  warehouse.Querier
	Ledger     Ledger
	Watermarks WatermarkReader
	// Now is processing time, for the watermark's lag; nil means time.Now
	// (the local server passes its virtual clock).
	Now func() time.Time
	// Aggregation names the aggregation shown; default "ventas_hora_pais".
	Aggregation string
	// Windows is how many of the newest hourly windows are charted; default 24.
	Windows int
	// Files is how many of the newest ledger records are listed; default 10.
	Files int
	// Refresh is how often the page fetches a new snapshot; default 5 s.
	// Against BigQuery each refresh is a query (billed at least 10 MB), so
	// a page left open in production wants a longer period.
	Refresh time.Duration
}

// Defaults of Source's settings.
const (
	DefaultAggregation = "ventas_hora_pais"
	DefaultWindows     = 24
	DefaultFiles       = 10
	DefaultRefresh     = 5 * time.Second
)

func (s Source) withDefaults() Source {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Aggregation == "" {
		s.Aggregation = DefaultAggregation
	}
	if s.Windows <= 0 {
		s.Windows = DefaultWindows
	}
	if s.Files <= 0 {
		s.Files = DefaultFiles
	}
	if s.Refresh <= 0 {
		s.Refresh = DefaultRefresh
	}
	return s
}
