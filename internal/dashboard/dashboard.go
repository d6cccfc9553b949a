// Package dashboard is the local operator's page: the chosen aggregation's
// sales per window and key on an event-time axis, drawn as its declaration
// says (sliding windows as a series, never added), the watermark and its
// lag, freshness, discards, open windows, the last files with their
// quarantine links, and, where the process keeps a Monitor, a monitoring
// panel read from its own log lines. The page is static (embedded, nothing
// fetched from another host) and refreshes itself from a JSON snapshot, so
// the server does no rendering and the JSON is what tests pin.
package dashboard

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Ledger lists the ingest ledger's records, newest first.
type Ledger interface {
	List(ctx context.Context) ([]ledger.Record, error)
}

// WatermarkReader reads an aggregation's watermark; zero before any order.
type WatermarkReader interface {
	Watermark(ctx context.Context, aggregation string) (time.Time, error)
}

// StreamStatus reads the stream processor's state without writing it.
type StreamStatus interface {
	Status(ctx context.Context, now time.Time) ([]stream.AggregationStatus, error)
}

var _ StreamStatus = (*stream.Processor)(nil)

// BacklogReader reads the orders subscription's backlog.
type BacklogReader interface {
	Backlog(ctx context.Context) (Backlog, error)
}

// Source is where the page's figures come from. A nil port leaves its part
// of the page empty with a note, so the page still helps while one backend
// is down or not configured.
type Source struct {
	// Warehouse serves the page's two named reads per refresh,
	// newest_windows and discard_summary.
	Warehouse  warehouse.Reader
	Ledger     Ledger
	Watermarks WatermarkReader
	Stream     StreamStatus
	Monitor    *Monitor // feeds the monitoring panel; nil leaves it out
	// Backlog is read where a Pub/Sub can tell it (the production-parity
	// stack); nil: the panel says no subscription is in the way.
	Backlog BacklogReader
	// QuarantineBucket empty leaves the files without a quarantine link.
	QuarantineBucket string
	// DownloadBase prefixes the quarantine link, a Cloud Storage JSON API
	// media download. Empty keeps it relative: the local server answers
	// that path itself (its fake GCS), with no credentials and no network.
	DownloadBase string
	Now          func() time.Time // processing time; nil: time.Now
	Aggregation  string           // the one shown; default DefaultAggregation
	// Aggregations are the declared ones a person may choose between
	// (?aggregation=); Aggregation is always one of them.
	Aggregations []string
	Files        int // newest ledger records listed
	Latest       int // newest dead letters, too-late drops and open windows listed
	// Refresh is how often the page fetches a snapshot; LocalRefresh over a
	// warehouse that bills nothing per query.
	Refresh time.Duration
}

// Defaults of Source's settings.
const (
	DefaultAggregation = "ventas_hora_pais"
	// DefaultWindows is at least how many of the newest windows are read,
	// raised to every window of the range.
	DefaultWindows = 24
	DefaultFiles   = 10
	DefaultLatest  = 5
	// DefaultRefresh is the period over BigQuery, where each refresh is
	// billed (a SKU view's refresh scans tens of MB): every 5 minutes a page
	// open around the clock stays within the free monthly TiB, every 2 it
	// does not (docs/cost.md). Panes change at most once a tick anyway.
	DefaultRefresh = 5 * time.Minute
	LocalRefresh   = 5 * time.Second
)

// DefaultRange is how far back the default view reaches: the windows that
// started in it up to the end of the newest window holding data (before
// any order, up to processing time), and the discards received in it up to
// processing time. Both bounds are on the tables' partitioning columns, so
// BigQuery reads at most two daily partitions of each.
const DefaultRange = 24 * time.Hour

func (s Source) withDefaults() Source {
	if s.Now == nil {
		s.Now = time.Now
	}
	s.Aggregation = cmp.Or(s.Aggregation, DefaultAggregation)
	if !slices.Contains(s.Aggregations, s.Aggregation) {
		s.Aggregations = append([]string{s.Aggregation}, s.Aggregations...)
	}
	s.Files = cmp.Or(max(s.Files, 0), DefaultFiles)
	s.Latest = cmp.Or(max(s.Latest, 0), DefaultLatest)
	s.Refresh = cmp.Or(max(s.Refresh, 0), DefaultRefresh)
	return s
}

// StoreWatermarks reads watermarks from the stream's state store, for a
// process that has the store but no processor.
type StoreWatermarks struct {
	Store docstore.Store
}

// Watermark refuses a name that would address another document.
func (s StoreWatermarks) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	return stream.ReadWatermark(ctx, s.Store, aggregation)
}
