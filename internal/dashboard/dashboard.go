// Package dashboard is the local operator's page: the chosen aggregation's
// sales per window and key from its dashboard view on an event-time axis,
// labelled and drawn as its declaration says (sliding windows as a series,
// never added; each bar marked with the timing of its latest pane; the 24
// hours up to the newest data unless the person chooses days), the watermark and its lag, freshness (last order
// accepted, last file loaded), the last 24 hours' dead letters and
// too-late drops, open windows, and the last ingested files with their
// loaded and quarantined counts and a link to each quarantine file; and,
// where the process keeps a Monitor, a monitoring panel over processing
// time (data freshness, system lag, orders per minute, discards, file
// loads, the last ERROR lines) read from its own log lines. The
// page is static (embedded HTML, CSS and a little JavaScript, no
// framework, nothing fetched from another host) and refreshes itself from
// a JSON snapshot, so the server does no rendering and the JSON is what
// tests pin.
package dashboard

import (
	"context"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
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

// StreamStatus reads the stream processor's state without writing it: open
// windows and the last accepted order; *stream.Processor is one.
type StreamStatus interface {
	Status(ctx context.Context, now time.Time) ([]stream.AggregationStatus, error)
}

var _ StreamStatus = (*stream.Processor)(nil)

// BacklogReader says how many messages wait on the orders subscription
// and how old the oldest unacknowledged one is.
type BacklogReader interface {
	Backlog(ctx context.Context) (Backlog, error)
}

// Source is where the page's figures come from. A nil port leaves its part
// of the page empty with a note, rather than failing the whole page, so the
// page still helps while one backend is down or not configured.
type Source struct {
	Warehouse  Warehouse
	Ledger     Ledger
	Watermarks WatermarkReader
	// Stream answers open windows and the last accepted order. Nil means
	// Watermarks, when that is also a StreamStatus (the processor is both).
	Stream StreamStatus
	// Monitor feeds the monitoring panel (data freshness, system lag,
	// throughput, discards, file loads, the last errors) from the
	// process's own log lines; nil leaves the panel out.
	Monitor *Monitor
	// Backlog reads the orders subscription's backlog for the panel where
	// a Pub/Sub can tell it (the production-parity stack); nil: the panel
	// says no subscription is in the way.
	Backlog BacklogReader
	// QuarantineBucket is where ledger records' quarantine objects live;
	// empty leaves the files without a quarantine link.
	QuarantineBucket string
	// DownloadBase prefixes the quarantine link, a Cloud Storage JSON API
	// media download ("download/storage/v1/b/B/o/O?alt=media"). Empty keeps
	// it relative to the page: the local server answers that path itself
	// (its fake GCS), so the link works with no credentials and no network.
	DownloadBase string
	// Now is processing time, for the watermark's lag; nil means time.Now
	// (the local server passes its virtual clock).
	Now func() time.Time
	// Aggregation names the aggregation shown; default "ventas_hora_pais".
	Aggregation string
	// Aggregations are the declared aggregations a person may choose
	// between (?aggregation=), by name, as the server's wiring passes them
	// from the declarations; Aggregation is always one of them. Default:
	// Aggregation alone.
	Aggregations []string
	// Windows is at least how many of the newest windows are read; default
	// 24, raised to every window of the range (96 of a sliding hour every
	// 15 minutes in 24 h).
	Windows int
	// Files is how many of the newest ledger records are listed; default 10.
	Files int
	// Latest is how many of the newest dead letters, too-late drops and open
	// windows are listed; default 5.
	Latest int
	// Refresh is how often the page fetches a new snapshot; default
	// DefaultRefresh. Against BigQuery each refresh is two queries, each
	// billed at least 10 MB per table it reads, so the default suits a page
	// left open all day in production; a free warehouse (the embedded one
	// of alpipe serve) sets LocalRefresh.
	Refresh time.Duration
}

// Defaults of Source's settings.
const (
	DefaultAggregation = "ventas_hora_pais"
	DefaultWindows     = 24
	DefaultFiles       = 10
	DefaultLatest      = 5
	// DefaultRefresh is the page's period when the wiring sets none, the
	// one for a page over BigQuery. Panes change at most once a minute (a
	// tick) and the SKU view's sliding windows move every 15 minutes, while
	// a refresh of ventas_sku_hora_movil scans up to two days of its panes
	// (tens of MB): every 5 minutes one page open around the clock stays
	// within BigQuery's free monthly TiB (docs/cost.md), every 2 minutes it
	// does not; at 5 s it would run 60 times the queries of 5 minutes for
	// figures that had not moved.
	DefaultRefresh = 5 * time.Minute
	// LocalRefresh is the period over a warehouse that bills nothing per
	// query (the embedded DuckDB, or that of another alpipe serve): there
	// the page may follow a demo closely.
	LocalRefresh = 5 * time.Second
)

// DefaultRange is how far back the default view reaches: without ?from the
// bars are the windows that started in the DefaultRange up to the end of
// the newest window holding data (newestEnd; before any order, up to
// processing time), and the discard counts are of the discards received in
// the last DefaultRange of processing time (Source.Now). window_start and received_at are the
// partitioning columns of the panes tables and of pedidos_descartados, so
// BigQuery reads at most two daily partitions of each instead of every day
// ever written.
const DefaultRange = 24 * time.Hour

func (s Source) withDefaults() Source {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Aggregation == "" {
		s.Aggregation = DefaultAggregation
	}
	if !slices.Contains(s.Aggregations, s.Aggregation) {
		s.Aggregations = append([]string{s.Aggregation}, s.Aggregations...)
	}
	if s.Windows <= 0 {
		s.Windows = DefaultWindows
	}
	if s.Files <= 0 {
		s.Files = DefaultFiles
	}
	if s.Latest <= 0 {
		s.Latest = DefaultLatest
	}
	if s.Stream == nil {
		if st, ok := s.Watermarks.(StreamStatus); ok {
			s.Stream = st
		}
	}
	if s.Refresh <= 0 {
		s.Refresh = DefaultRefresh
	}
	return s
}
