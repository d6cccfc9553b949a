// Package ingest turns one landed object generation into warehouse rows,
// a quarantine file and a ledger record, exactly once whatever the platform
// retries.
//
// The order of effects is what makes retries safe:
//  1. claim the generation in the ledger (a lease: one live attempt at a time);
//  2. stream the object, validating each row; valid rows go to one atomic
//     warehouse load whose ID derives from the generation (a repeated load of
//     the same ID adds nothing), rejected rows to a quarantine object whose
//     name derives from the generation (a rewrite replaces it). The
//     quarantine is committed when the stream ends, before the load can
//     commit: a file whose rejected rows cannot be written loads nothing;
//  3. rebuild the daily aggregates for the dates the file touched (a
//     replacement, so repeating it is harmless);
//  4. finish the ledger record with the counts. A FAILED record counts only
//     what is committed: rows read, and rows loaded or quarantined only if
//     their load or quarantine object committed.
//
// A crash between any two steps leaves the lease to expire; the redelivered
// event takes over and repeats the steps, and each step is idempotent.
package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Object identifies the generation of a landed object, as the finalize event
// describes it.
type Object struct {
	Bucket     string
	Name       string
	Generation int64
	// MD5 is base64, as GCS reports it; "" when the event has none (a
	// composite object, an event from another source): contentMD5 then
	// finds it.
	MD5  string
	Size int64
}

// Key returns the object's ledger key.
func (o Object) Key() ledger.Key {
	return ledger.Key{Bucket: o.Bucket, Object: o.Name, Generation: o.Generation}
}

// ErrBusy means another live attempt holds this generation: answer with a
// non-2xx status so that the platform redelivers later, when that attempt has
// finished (then the redelivery is a no-op) or its lease has expired (then it
// takes over).
var ErrBusy = errors.New("object generation is being ingested by another attempt")

// ErrNotLanding means the object lies outside the landing area
// (Config.LandingBucket and LandingPrefixes): nothing was loaded or
// recorded. It is permanent, so an event about such an object is
// acknowledged; a backfill reports it as a failure of the operator's choice of
// prefix.
var ErrNotLanding = errors.New("not a landing object")

// FinishTimeout bounds the ledger write that records an attempt's outcome.
// It runs on a context of its own, so that an attempt cut by its Deadline
// still releases its claim; Deadline + FinishTimeout must stay below the
// platform's request timeout, or the platform cuts that write too.
const FinishTimeout = 15 * time.Second

// Config are the settings of a Service.
type Config struct {
	QuarantineBucket string
	QuarantinePrefix string // e.g. "cuarentena/"
	// LandingBucket and LandingPrefixes are where the ERP drops files; an
	// object elsewhere (a quarantine file, an event from a mis-scoped
	// trigger) is never loaded. An empty LandingBucket accepts any bucket
	// and no prefixes any name, but the quarantine location is always
	// refused: loading a quarantine file would load rejected rows.
	LandingBucket   string
	LandingPrefixes []string
	MaxRecordBytes  int
	// MaxExpansion bounds decompressed bytes per stored byte of a gzip
	// object (0: DefaultMaxExpansion); beyond it the file is rejected as a
	// zip bomb.
	MaxExpansion int
	// Deadline bounds one attempt; keep it below the ledger lease, so an
	// attempt gives up before another may take the file over, and below the
	// platform's request timeout by more than FinishTimeout (0: none).
	Deadline time.Duration
}

// Service ingests object generations.
type Service struct {
	objects   Objects
	ledger    Ledger
	locks     Locker
	warehouse Warehouse
	feeds     *contract.Registry
	cfg       Config
	now       func() time.Time
	log       *slog.Logger
	stats     *Stats
}

// LedgerLocker is the ledger with its locks (ledger.Ledger is both).
type LedgerLocker interface {
	Ledger
	Locker
}

// New builds a Service; every dependency is required.
func New(objs Objects, l LedgerLocker, wh Warehouse, feeds *contract.Registry, cfg Config, now func() time.Time, log *slog.Logger) (*Service, error) {
	var missing []string
	for name, dep := range map[string]any{"objects": objs, "ledger": l, "warehouse": wh, "feeds": feeds, "clock": now, "logger": log} {
		if isNil(dep) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("ingest: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if cfg.QuarantineBucket == "" {
		return nil, errors.New("ingest: quarantine bucket is empty")
	}
	if len(cfg.QuarantinePrefix) > maxQuarantinePrefix {
		return nil, fmt.Errorf("ingest: quarantine prefix is %d bytes, more than %d: quarantine names would not fit", len(cfg.QuarantinePrefix), maxQuarantinePrefix)
	}
	if cfg.LandingBucket == cfg.QuarantineBucket && overlaps(cfg.LandingPrefixes, cfg.QuarantinePrefix) {
		return nil, fmt.Errorf("ingest: quarantine gs://%s/%s lies inside the landing area: its files would be loaded", cfg.QuarantineBucket, cfg.QuarantinePrefix)
	}
	if cfg.MaxRecordBytes <= 0 {
		cfg.MaxRecordBytes = 1 << 20
	}
	return &Service{objects: objs, ledger: l, locks: l, warehouse: wh, feeds: feeds, cfg: cfg, now: now, log: log, stats: NewStats()}, nil
}

func isNil(v any) bool {
	switch d := v.(type) {
	case nil:
		return true
	case *contract.Registry:
		return d == nil
	case *slog.Logger:
		return d == nil
	case func() time.Time:
		return d == nil
	}
	return false
}

// Stats returns the service's counters.
func (s *Service) Stats() *Stats { return s.stats }

// Ingest handles one finalize event. A nil error means the event may be
// acknowledged: the generation is finished (loaded, rejected, skipped or a
// duplicate), now or by an earlier delivery. A non-nil error means a retry can
// help (a backend was down, or another attempt is still working: ErrBusy).
//
// An object outside the landing area returns ErrNotLanding, touching nothing.
func (s *Service) Ingest(ctx context.Context, obj Object) (ledger.Record, error) {
	if !s.landing(obj) {
		level := slog.LevelInfo
		if obj.Bucket != s.cfg.LandingBucket {
			level = slog.LevelWarn // a trigger on the wrong bucket, most likely
		}
		s.log.Log(ctx, level, "event ignored: not a landing object", "bucket", obj.Bucket, "name", obj.Name, "generation", obj.Generation)
		return ledger.Record{Key: obj.Key()}, fmt.Errorf("ingest %s: %w", obj.Key(), ErrNotLanding)
	}
	if s.cfg.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.Deadline)
		defer cancel()
	}
	key := obj.Key()
	feed, matched := s.feeds.Match(obj.Name)
	md5 := "" // content dedup is only meaningful for files we load
	if matched {
		var err error
		if md5, err = s.contentMD5(ctx, obj); err != nil {
			return ledger.Record{Key: key}, fmt.Errorf("ingest %s: %w", key, err)
		}
	}
	owner := newOwner()
	claim, err := s.ledger.Claim(ctx, key, md5, owner, s.now())
	if err != nil {
		return ledger.Record{}, fmt.Errorf("claim %s: %w", key, err)
	}
	switch claim.Decision {
	case ledger.AlreadyFinished, ledger.DuplicateContent:
		s.logOutcome(ctx, claim.Record, claim.Decision == ledger.AlreadyFinished, timings{})
		return claim.Record, nil
	case ledger.Busy:
		return claim.Record, fmt.Errorf("ingest %s: %w (owner %s, lease until %s)", key, ErrBusy, claim.Record.Owner, claim.Record.LeaseUntil.Format(time.RFC3339))
	case ledger.Proceed:
	default:
		return claim.Record, fmt.Errorf("claim %s: unexpected decision %d", key, claim.Decision)
	}

	rec := claim.Record
	if !matched {
		rec.State = ledger.Skipped
		rec.Reason = "no contract matches this object name"
		return s.finish(ctx, rec, timings{})
	}
	rec.Feed = feed.Name()
	rec.LoadID = loadID(feed.Table(), key)

	var tm timings
	res, err := s.run(ctx, obj, feed, &rec, &tm)
	if err != nil {
		rec.State = ledger.Failed
		rec.Reason = err.Error()
		permanent := warehouse.IsPermanent(err)
		if permanent {
			rec.Reason = "permanent (not retried; fix, then re-run with alpipe backfill): " + rec.Reason
		}
		fctx, cancel := detached(ctx)
		ferr := s.ledger.Finish(fctx, rec, s.now())
		cancel()
		if ferr != nil && !errors.Is(ferr, ledger.ErrLeaseLost) {
			s.log.WarnContext(ctx, "could not release the ledger lease; it will expire", "object", key.String(), "error", ferr)
		}
		s.stats.failed(rec.Feed)
		if permanent {
			// Redelivering would fail the same way for 24 h, each attempt a
			// table modification counted against the daily quota.
			s.log.ErrorContext(ctx, "file failed permanently; not retried", "object", key.String(), "feed", rec.Feed, "reason", rec.Reason)
			return rec, nil
		}
		return rec, fmt.Errorf("ingest %s: %w", key, err)
	}
	rec.State = res.state
	rec.Reason = res.reason
	return s.finish(ctx, rec, tm)
}

func (s *Service) finish(ctx context.Context, rec ledger.Record, tm timings) (ledger.Record, error) {
	rec.FinishedAt = s.now()
	// The work is done and idempotent; recording it must not be lost to a
	// cancelled request, or the file would sit IN_PROGRESS until its lease
	// expires.
	fctx, cancel := detached(ctx)
	defer cancel()
	if err := s.ledger.Finish(fctx, rec, rec.FinishedAt); err != nil {
		if errors.Is(err, ledger.ErrLeaseLost) {
			// Another attempt took over after our lease expired; our effects
			// were idempotent and it will record the outcome itself.
			s.log.WarnContext(ctx, "ledger lease lost; the attempt that took over records the outcome", "object", rec.Key.String())
			return rec, nil
		}
		return rec, fmt.Errorf("finish %s: %w", rec.Key, err)
	}
	s.stats.finished(rec)
	s.logOutcome(ctx, rec, false, tm)
	return rec, nil
}

// detached is the context of a write that must happen even though ctx has
// expired (the attempt's Deadline) or been cancelled: it keeps ctx's values
// for logging and tracing and bounds the write by FinishTimeout instead.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
}

// loadID derives the warehouse load ID from the generation alone, so every
// attempt at the same generation asks for the same load and at most one can
// commit. It keeps a readable prefix for people reading BigQuery job lists.
func loadID(table string, key ledger.Key) string {
	sum := sha256.Sum256([]byte(key.String()))
	return fmt.Sprintf("%s-g%d-%s", table, key.Generation, hex.EncodeToString(sum[:8]))
}

func newOwner() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Service) logOutcome(ctx context.Context, rec ledger.Record, redelivered bool, tm timings) {
	level := slog.LevelInfo
	switch {
	case rec.State == ledger.Rejected:
		level = slog.LevelError
	case rec.Counts.Quarantined > 0:
		level = slog.LevelWarn
	}
	s.log.Log(ctx, level, "file "+strings.ToLower(string(rec.State)),
		"object", rec.Key.String(),
		"feed", rec.Feed,
		"state", string(rec.State),
		"redelivered", redelivered,
		"rows_read", rec.Counts.Read,
		"rows_loaded", rec.Counts.Loaded,
		"rows_quarantined", rec.Counts.Quarantined,
		"rejects", rec.Counts.Rejects,
		"reason", rec.Reason,
		"quarantine_object", rec.Quarantine,
		"load_id", rec.LoadID,
		"already_loaded", rec.AlreadyLoaded,
		"attempt", rec.Attempt,
		"load_ms", tm.Load.Milliseconds(),
		"refresh_ms", tm.Refresh.Milliseconds(),
		"duration_ms", tm.Total.Milliseconds(),
		"drift_added", driftList(rec.Drift, true),
		"drift_missing", driftList(rec.Drift, false),
	)
	if rec.Drift == nil || redelivered {
		return
	}
	// One line per drifted column, which the log-based metric
	// alpipe/schema_drift counts by feed, column and change: the alert then
	// opens one incident per new column, however many files carry it.
	for _, c := range rec.Drift.Added {
		s.log.WarnContext(ctx, "schema drift", "object", rec.Key.String(), "feed", rec.Feed, "column", c, "change", "added", "state", string(rec.State))
	}
	for _, c := range rec.Drift.Missing {
		s.log.WarnContext(ctx, "schema drift", "object", rec.Key.String(), "feed", rec.Feed, "column", c, "change", "missing", "state", string(rec.State))
	}
}

// driftList returns one side of a drift for the log line; an empty list, not
// null, when there is none, so the field always has one type.
func driftList(d *ledger.Drift, added bool) []string {
	switch {
	case d == nil:
		return []string{}
	case added && d.Added != nil:
		return d.Added
	case !added && d.Missing != nil:
		return d.Missing
	}
	return []string{}
}
