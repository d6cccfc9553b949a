// Package sweep finds landing files whose finalize events never got an
// acknowledged ingest and ingests them. Eventarc keeps an undelivered event
// for 24 h and has no dead-letter topic, so after an outage or a bad deploy
// a file could otherwise stay unloaded with nobody told.
//
// A sweep ingests the landing objects created within the window but longer
// ago than the grace period that have no final ledger record, through the
// same path as a backfill. The ledger makes this safe against events
// arriving at the same time: a live claim is left alone, a finished
// generation is never redone.
package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

// Lister streams the live objects under a prefix (objects.GCS).
type Lister interface {
	List(ctx context.Context, bucket, prefix string) iter.Seq2[objects.Attrs, error]
}

// Ledger reads the ingest ledger and holds the run lock (ledger.Ledger).
type Ledger interface {
	Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error)
	Lock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	Unlock(ctx context.Context, name, owner string) error
}

// Ingester runs one object generation through the file-drop path and
// returns its final record (reingest.Direct over the ingest service).
type Ingester interface {
	Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error)
}

// Defaults of Options, as SWEEP_WINDOW, SWEEP_GRACE, SWEEP_MAX_OBJECTS and
// SWEEP_CONCURRENCY default.
const (
	DefaultWindow      = 72 * time.Hour
	DefaultGrace       = 30 * time.Minute
	DefaultMaxObjects  = 100
	DefaultConcurrency = 2
)

// runLockTTL bounds how long a crashed run blocks the next ones. A run that
// outlives it may overlap the next; that only repeats ledger reads.
const runLockTTL = 30 * time.Minute

// ErrBusy means another run holds the sweep lock; the caller should report
// success, the other run does the work.
var ErrBusy = errors.New("sweep: another run is in progress")

// Options configure a Sweeper. Zero durations and counts take the defaults.
type Options struct {
	Bucket   string
	Prefixes []string // none: the whole bucket
	// Window: objects created longer ago are not examined (their events
	// expired long before; an older file is a backfill's business).
	Window time.Duration
	// Grace: objects younger than this are left to Eventarc.
	Grace       time.Duration
	MaxObjects  int // ingested per run at most; the rest wait for the next run
	Concurrency int // objects ingested at once
	Now         func() time.Time
	Log         *slog.Logger
}

// Sweeper runs sweeps; it is safe for concurrent use (runs exclude each other).
type Sweeper struct {
	lister   Lister
	ledger   Ledger
	ingester Ingester
	opts     Options
}

// New builds a Sweeper; lister, ledger, ingester, Bucket and Log are
// required.
func New(lister Lister, l Ledger, ing Ingester, opts Options) (*Sweeper, error) {
	var missing []string
	if lister == nil {
		missing = append(missing, "lister")
	}
	if l == nil {
		missing = append(missing, "ledger")
	}
	if ing == nil {
		missing = append(missing, "ingester")
	}
	if opts.Log == nil {
		missing = append(missing, "logger")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("sweep: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if opts.Bucket == "" {
		return nil, errors.New("sweep: no landing bucket")
	}
	if opts.Window < 0 || opts.Grace < 0 || opts.MaxObjects < 0 || opts.Concurrency < 0 {
		return nil, fmt.Errorf("sweep: negative setting (window %s, grace %s, max objects %d, concurrency %d)", opts.Window, opts.Grace, opts.MaxObjects, opts.Concurrency)
	}
	opts.Window = cmp.Or(opts.Window, DefaultWindow)
	opts.Grace = cmp.Or(opts.Grace, DefaultGrace)
	opts.MaxObjects = cmp.Or(opts.MaxObjects, DefaultMaxObjects)
	opts.Concurrency = cmp.Or(opts.Concurrency, DefaultConcurrency)
	if opts.Grace >= opts.Window {
		return nil, fmt.Errorf("sweep: grace %s must be shorter than the window %s", opts.Grace, opts.Window)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Prefixes = dedupe(opts.Prefixes)
	return &Sweeper{lister: lister, ledger: l, ingester: ing, opts: opts}, nil
}

// dedupe drops prefixes another one covers, so no object is listed twice.
func dedupe(prefixes []string) []string {
	if len(prefixes) == 0 {
		return []string{""}
	}
	var out []string
	for i, p := range prefixes {
		covered := false
		for j, q := range prefixes {
			if j != i && strings.HasPrefix(p, q) && (p != q || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

// Verdict is what a sweep does with one listed object.
type Verdict int

const (
	Ignore Verdict = iota + 1 // finished, or not the sweeper's business
	Leave                     // unfinished, but a live attempt holds its claim and records the outcome
	Sweep                     // unfinished and unclaimed (no record, FAILED, or an expired lease)
)

// examined reports whether a is old enough to be missed by its events and
// young enough to be swept: created in [now-window, now-grace]. Only those
// cost a ledger read.
func (o Options) examined(a objects.Attrs, now time.Time) bool {
	if a.Size == 0 && strings.HasSuffix(a.Name, "/") {
		return false // a console's "folder/" placeholder
	}
	if a.Created.IsZero() {
		return false
	}
	age := now.Sub(a.Created)
	// Younger than the grace period, Eventarc is still delivering (its
	// first attempts and backoff); a negative age is a clock ahead of ours.
	return age >= o.Grace && age <= o.Window
}

// verdict decides for an examined object from its ledger record (ok false:
// none). The final states are those the ingest acknowledges an event for.
func verdict(rec ledger.Record, ok bool, now time.Time) (Verdict, string) {
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
