package ingest

import (
	"context"
	"fmt"
	"time"
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

func (s *Service) refresh(ctx context.Context, aggregate string, dates []int32, owner string) error {
	name := "refresh/" + aggregate
	deadline := time.Now().Add(refreshLockWait)
	for {
		ok, err := s.locks.Lock(ctx, name, owner, s.now(), refreshLockTTL)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another instance has held the %s refresh lock for %s", aggregate, refreshLockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
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
	return s.warehouse.RefreshDaily(ctx, aggregate, dates)
}
