package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Refreshes of one aggregate never overlap across instances. A BigQuery
// WRITE_TRUNCATE query reads the source as of its start and replaces the
// partition at its end: if file B's load committed while file A's refresh
// ran, and B's refresh finished first, A's would overwrite B's figures with
// older ones. Serialised, every refresh that starts after a load commits
// sees it, and the last one to finish is the newest.
const (
	refreshLockTTL  = 5 * time.Minute // longer than any daily refresh
	refreshLockWait = 4 * time.Minute // then give up: the event is redelivered
	refreshLockPoll = 200 * time.Millisecond
)

// maxNoted bounds the sums out of range named in a file's reason, which
// the ledger keeps and status shows; the log has one line for each.
const maxNoted = 5

// refreshAggregates rebuilds each aggregate for the dates of a file's rows
// and returns what its DONE record should say about them: the sums left out
// of range (see refresh), "" when none.
func (s *Service) refreshAggregates(ctx context.Context, aggregates []string, dates []int32, owner string) (string, error) {
	var notes []string
	for _, agg := range aggregates {
		oe, err := s.refreshDaily(ctx, agg, dates, owner)
		if err != nil {
			return "", fmt.Errorf("refresh %s: %w", agg, err)
		}
		if oe != nil {
			notes = append(notes, oe.Summary(maxNoted))
		}
	}
	return strings.Join(notes, "; "), nil
}

// refreshDaily rebuilds aggregate for dates under the aggregate's lock. A
// group whose sum its column cannot hold does not fail the refresh: the
// warehouse refreshed every other group and left it out, retrying would
// find it again until its rows are corrected, and the file's rows are
// loaded. Each such sum is logged as a "refresh overflow" line (date, the
// aggregate's keys by name, column, sum), which the log-based metric
// alpipe/refresh_overflow counts and an alert pages on, and returned.
func (s *Service) refreshDaily(ctx context.Context, aggregate string, dates []int32, owner string) (*warehouse.OverflowError, error) {
	name := "refresh/" + aggregate
	deadline := time.Now().Add(refreshLockWait)
	for {
		ok, err := s.locks.Lock(ctx, name, owner, s.now(), refreshLockTTL)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another instance has held the %s refresh lock for %s", aggregate, refreshLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(refreshLockPoll):
		}
	}
	defer func() {
		uctx, cancel := detached(ctx)
		defer cancel()
		if err := s.locks.Unlock(uctx, name, owner); err != nil {
			s.log.WarnContext(ctx, "refresh lock not released; it expires by itself", "aggregate", aggregate, "error", err.Error())
		}
	}()
	err := s.warehouse.RefreshDaily(ctx, aggregate, dates)
	var oe *warehouse.OverflowError
	if !errors.As(err, &oe) {
		return nil, err
	}
	for _, o := range oe.Overflows {
		attrs := []any{"aggregate", oe.Aggregate, "date", warehouse.FormatDate(o.Date)}
		for i, k := range o.Keys {
			if i < len(oe.KeyNames) {
				attrs = append(attrs, oe.KeyNames[i], k)
			}
		}
		attrs = append(attrs, "column", o.Column, "sum", o.Sum)
		s.log.Log(ctx, slog.LevelError, "refresh overflow", attrs...)
	}
	return oe, nil
}
