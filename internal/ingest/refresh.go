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

// Refreshes of one aggregate never overlap across instances: a WRITE_TRUNCATE
// query reads as of its start, so an older refresh finishing last would
// overwrite a newer one's figures.
const (
	refreshLockTTL  = 5 * time.Minute // longer than any daily refresh
	refreshLockWait = 4 * time.Minute // then give up: the event is redelivered
	refreshLockPoll = 200 * time.Millisecond
)

// maxNoted bounds the sums out of range named in a file's reason.
const maxNoted = 5

// refreshAggregates rebuilds each aggregate for a file's dates and returns
// the sums left out of range, for its DONE record ("" when none).
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

// refreshDaily rebuilds aggregate for dates under its lock. A group whose sum
// its column cannot hold is left out, not a failure (a retry would find it
// again): it is logged as "refresh overflow", which the log-based metric
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
