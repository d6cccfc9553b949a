// Package ingest turns one landed object generation into warehouse rows, a
// quarantine file and a ledger record, exactly once whatever the platform
// retries. The order of effects makes retries safe:
//  1. claim the generation in the ledger (a lease: one live attempt);
//  2. stream the object: valid rows to one warehouse load whose ID derives
//     from the generation, rejected rows to a quarantine object whose name
//     does, committed when the stream ends, before the load can commit;
//  3. rebuild the daily aggregates for the file's dates (a replacement);
//  4. finish the ledger record; a FAILED one counts only what committed.
//
// A crash between two steps leaves the lease to expire; the redelivery
// repeats the steps, each idempotent.
package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	MD5        string // base64, as GCS reports it; "" when the event has none (contentMD5)
	Size       int64
}

func (o Object) Key() ledger.Key {
	return ledger.Key{Bucket: o.Bucket, Object: o.Name, Generation: o.Generation}
}

// ErrBusy means another live attempt holds this generation: answer non-2xx
// so that the platform redelivers once it finished or its lease expired.
var ErrBusy = errors.New("object generation is being ingested by another attempt")

// ErrNotLanding means the object lies outside the landing area: nothing was
// loaded or recorded. It is permanent: the event is acknowledged.
var ErrNotLanding = errors.New("not a landing object")

// FinishTimeout bounds the ledger write of an attempt's outcome, on a
// context of its own so that an attempt cut by its Deadline still releases
// its claim; Deadline + FinishTimeout must stay below the request timeout.
const FinishTimeout = 15 * time.Second

type Config struct {
	QuarantineBucket string
	QuarantinePrefix string // e.g. "cuarentena/"
	// LandingBucket and LandingPrefixes are where the ERP drops files; ""
	// and none accept any, but never the quarantine location.
	LandingBucket   string
	LandingPrefixes []string
	MaxRecordBytes  int // 0: record.DefaultMaxRecordBytes
	// Deadline bounds one attempt (0: none): below the ledger lease, and
	// below the request timeout by more than FinishTimeout.
	Deadline time.Duration
}

type Service struct {
	objects   Objects
	ledger    Ledger
	locks     Locker
	warehouse Warehouse
	feeds     *contract.Registry
	cfg       Config
	now       func() time.Time
	log       *slog.Logger
}

// LedgerLocker is the ledger with its locks (ledger.Ledger is both).
type LedgerLocker interface {
	Ledger
	Locker
}

// New builds a Service; every dependency is required.
func New(objs Objects, l LedgerLocker, wh Warehouse, feeds *contract.Registry, cfg Config, now func() time.Time, log *slog.Logger) (*Service, error) {
	var missing []string
	for name, isNil := range map[string]bool{"objects": objs == nil, "ledger": l == nil, "warehouse": wh == nil,
		"feeds": feeds == nil, "clock": now == nil, "logger": log == nil} {
		if isNil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
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
	return &Service{objects: objs, ledger: l, locks: l, warehouse: wh, feeds: feeds, cfg: cfg, now: now, log: log}, nil
}

// Ingest handles one finalize event. A nil error means the event may be
// acknowledged: the generation is finished, now or earlier. Otherwise a
// retry can help (ErrBusy, an outage), except for ErrNotLanding.
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
	// Not lost to a cancelled request, or the file sits IN_PROGRESS until its lease expires.
	fctx, cancel := detached(ctx)
	defer cancel()
	if err := s.ledger.Finish(fctx, rec, rec.FinishedAt); err != nil {
		if errors.Is(err, ledger.ErrLeaseLost) {
			s.log.WarnContext(ctx, "ledger lease lost; the attempt that took over records the outcome", "object", rec.Key.String())
			return rec, nil
		}
		return rec, fmt.Errorf("finish %s: %w", rec.Key, err)
	}
	s.logOutcome(ctx, rec, false, tm)
	return rec, nil
}

// detached is for a write that must happen though ctx has ended: ctx's
// values, bounded by FinishTimeout.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), FinishTimeout)
}

// loadID derives the load ID from the generation alone, so at most one
// attempt's load commits; its prefix is for people reading job lists.
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
	drift := driftSides(rec.Drift)
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
		"drift_added", drift[0].columns,
		"drift_missing", drift[1].columns,
	)
	if redelivered {
		return
	}
	// One line per drifted column, which the log-based metric
	// alpipe/schema_drift counts: one incident per new column.
	for _, side := range drift {
		for _, c := range side.columns {
			s.log.WarnContext(ctx, "schema drift", "object", rec.Key.String(), "feed", rec.Feed,
				"column", c, "change", side.change, "state", string(rec.State))
		}
	}
}

type driftSide struct {
	change  string // "added" or "missing", as logs and counters name it
	columns []string
}

// driftSides returns a drift's two sides, [] rather than null when none.
func driftSides(d *ledger.Drift) [2]driftSide {
	if d == nil {
		d = &ledger.Drift{}
	}
	return [2]driftSide{
		{change: "added", columns: append([]string{}, d.Added...)},
		{change: "missing", columns: append([]string{}, d.Missing...)},
	}
}
