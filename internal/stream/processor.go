package stream

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Sink receives panes (<aggregation>_paneles) and discarded messages
// (pedidos_descartados). It must ignore a Row.ID appended before: the
// outbox appends again whatever it cannot prove was appended.
type Sink interface {
	Append(ctx context.Context, table string, rows []warehouse.Row) error
}

// Processor handles order deliveries and timer ticks for a set of
// aggregations. Everything is in the store, so any number of instances may
// run at once; an instance shares only the batch its concurrent deliveries
// join (WithBatching).
type Processor struct {
	store     docstore.Store
	sink      Sink
	aggs      []aggregation
	isCountry order.IsCountry
	log       *slog.Logger
	rows      *rowMapper
	opts      options
	batches   *batcher // nil: batching off
	instance  string   // random, names this process's batches
	batchSeq  atomic.Uint64
	specs     map[string]window.Spec // by name
	// controlReady: the control document holds every configured
	// aggregation (ensureControl).
	controlMu    sync.Mutex
	controlReady bool
}

type aggregation struct {
	spec  window.Spec
	paths paths
}

// New checks every spec and the tables' schemas, so that a bad
// configuration stops the server before it serves anything.
func New(store docstore.Store, sink Sink, specs []window.Spec, isCountry order.IsCountry, log *slog.Logger, opts ...Option) (*Processor, error) {
	var errs []error
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	if store == nil {
		errs = append(errs, errors.New("no state store"))
	}
	if sink == nil {
		errs = append(errs, errors.New("no sink"))
	}
	if len(specs) == 0 {
		errs = append(errs, errors.New("no aggregation configured"))
	}
	names := map[string]bool{}
	aggs := make([]aggregation, 0, len(specs))
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if names[s.Name] {
			errs = append(errs, fmt.Errorf("aggregation %q is configured twice", s.Name))
			continue
		}
		names[s.Name] = true
		if s.Session() && s.KeyField == KeySKU {
			errs = append(errs, fmt.Errorf("aggregation %q: session windows are keyed by an order field, not %q", s.Name, KeySKU))
			continue
		}
		if !keyFieldOK(s.KeyField) {
			errs = append(errs, fmt.Errorf("aggregation %q: key field %q is neither a field of an order nor %q", s.Name, s.KeyField, KeySKU))
			continue
		}
		aggs = append(aggs, aggregation{spec: s, paths: pathsOf(s.Name)})
	}
	var rows *rowMapper
	if len(errs) == 0 {
		var err error
		if rows, err = newRowMapper(specs); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("stream processor: %w", errors.Join(errs...))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Processor{store: store, sink: sink, aggs: aggs, isCountry: isCountry, log: log, rows: rows, opts: o,
		instance: rand.Text()[:8], specs: map[string]window.Spec{}}
	for _, a := range aggs {
		p.specs[a.spec.Name] = a.spec
	}
	if o.batchWait > 0 {
		p.batches = newBatcher(p, o.batchWait, o.batchMax)
	}
	return p, nil
}

// Specs returns the aggregations' specifications, in configuration order.
func (p *Processor) Specs() []window.Spec {
	out := make([]window.Spec, len(p.aggs))
	for i, a := range p.aggs {
		out[i] = a.spec
	}
	return out
}

// Fate is what handling did with a message in one aggregation.
type Fate string

const (
	Accepted   Fate = "accepted"    // counted in its window
	Duplicate  Fate = "duplicate"   // the pedido_id was handled before; nothing changed
	TooLate    Fate = "too_late"    // dropped: end + L <= W in each of its windows; recorded in pedidos_descartados
	Invalid    Fate = "invalid"     // not a valid order; recorded in pedidos_descartados
	NoElements Fate = "no_elements" // key sku and no line has a SKU; recorded as sku_missing
)

// Result says what Handle did with one delivery.
type Result struct {
	MessageID    string
	PedidoID     string    // "" when the body holds none
	Invalid      string    // the reason ("invalid: ...") when not a valid order; no Aggregations then
	Duplicate    bool      // the invalid message had been dead-lettered before
	Aggregations []Outcome // one per aggregation, in configuration order
	Batch        BatchInfo
}

// BatchInfo describes one batch of deliveries, for logs and load tests.
type BatchInfo struct {
	ID           string // unique in the process
	Deliveries   int
	Transactions int
	Attempts     int // runs of the transactions, more under contention
}

// Fate is Invalid for an invalid message, else the fate in the first
// aggregation (the only one, by default).
func (r Result) Fate() Fate {
	if r.Invalid != "" || len(r.Aggregations) == 0 {
		return Invalid
	}
	return r.Aggregations[0].Fate
}

// Outcome is what happened to a valid order in one aggregation; each of
// its elements is accepted or dropped as too late on its own (Elements).
type Outcome struct {
	Aggregation string
	// Fate is Accepted when some element counted, TooLate when every one
	// was dropped, NoElements when there was none, or Duplicate.
	Fate Fate
	// Recorded is, for a Duplicate, the fate of the first delivery ("" when
	// it was handled before this aggregation existed).
	Recorded Fate
	// Lateness, Window and Key are those of the last accepted element, or
	// of the last element when none was accepted; unset for a duplicate.
	Lateness   window.Lateness
	Window     window.Window
	Key        string
	Elements   []ElementOutcome // by key then window start; empty for a duplicate
	SKUMissing []int            // indexes of the lines without a SKU (key sku)
	Watermark  time.Time        // the W the order was classified against; zero: none yet
	Pending    int              // rows left in the outbox because the sink failed
}

// ElementOutcome is what happened to an order's part in one (window, key).
type ElementOutcome struct {
	Window   window.Window
	Key      string
	Fate     Fate // Accepted or TooLate
	Lateness window.Lateness
}

// rows counts the outbox rows the outcome wrote.
func (o Outcome) rows() int {
	n := len(o.SKUMissing)
	seen := map[time.Time]bool{}
	for _, e := range o.Elements {
		if e.Fate == TooLate && !seen[e.Window.Start] {
			seen[e.Window.Start] = true
			n++
		}
	}
	return n
}

// TickResult says what a Tick did.
type TickResult struct {
	Now                time.Time
	Aggregations       []AggregationTick // in configuration order
	DeadLetters        int               // invalid messages' rows appended from the outbox
	DeadLettersPending int
}

// AggregationTick is what a Tick did for one aggregation.
type AggregationTick struct {
	Aggregation     string
	Busy            bool // another tick held the lease, so this one did nothing here
	WatermarkBefore time.Time
	Watermark       time.Time     // W after the tick; zero: no order accepted yet
	Lag             time.Duration // now - W (0 while W is at minus infinity)
	OpenWindows     int           // windows on the fold's agenda when the tick started (not keys)
	Visited         int           // keys whose trigger ran: every key of each window touched or due
	Records         int           // elements of the dedup records folded
	Panes           []window.Pane // emitted by this tick, sorted by identity
	Expired         int           // (window, key)s whose state was deleted
	Flushed         int           // outbox rows appended to the sink
	Pending         int           // outbox rows left for the next tick (sink failed)
	// Failing are the windows this tick could not read or add up; every
	// other window was processed. Not an error of the tick (retrying at
	// once cannot help): each stays on the agenda, its new elements parked.
	// At most MaxReportedFailing, the first by window; FailingCells counts
	// them all.
	Failing      []FailingWindow
	FailingCells int
}

// ErrTickBusy is returned by Tick when another tick held the lease of every
// aggregation: the call did nothing and need not be retried (answer 2xx).
var ErrTickBusy = errors.New("stream: another tick is running")
