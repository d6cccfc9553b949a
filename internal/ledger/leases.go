package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

const lockCollection = "ledger_locks"

// lock is a named lease: who holds it and until when.
type lock struct {
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
}

// Lock takes the named lock for owner until now+ttl, unless another owner
// holds an unexpired one (then it returns false). Taking a lock one already
// holds extends it. Locks live beside the ledger and expire by themselves,
// so an owner that dies never blocks the others for longer than ttl.
func (l *Ledger) Lock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (taken bool, err error) {
	path := lockCollection + "/" + docID(name)
	err = l.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		cur, held, err := read[lock](tx, path)
		taken = err == nil && !(held && cur.Owner != owner && now.Before(cur.Until))
		if !taken {
			return err
		}
		// TTL tidies abandoned locks.
		return set(tx, docstore.Doc{Path: path, ExpireAt: now.Add(ttl).Add(24 * time.Hour)}, lock{Owner: owner, Until: now.Add(ttl)})
	})
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", name, err)
	}
	return taken, nil
}

// Unlock releases the named lock if owner still holds it.
func (l *Ledger) Unlock(ctx context.Context, name, owner string) error {
	path := lockCollection + "/" + docID(name)
	err := l.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		cur, held, err := read[lock](tx, path)
		if err != nil || !held || cur.Owner != owner {
			return err
		}
		return tx.Delete(path)
	})
	if err != nil {
		return fmt.Errorf("unlock %s: %w", name, err)
	}
	return nil
}

// ReleaseLeases ends every lease in the store: each IN_PROGRESS record
// becomes FAILED with reason (so the next delivery takes it over at once
// and the status report shows why), and every named lock is dropped. It
// returns how many it released.
//
// Only a caller that can prove every holder dead may call it, and only
// before it takes a lease itself: the local server, once it holds its data
// folder's lock (no other process can open the store, so whoever took a
// lease in it has died: kill -9, a crash). In production a lease's holder
// may be alive on another instance, and expiry is the only proof.
func (l *Ledger) ReleaseLeases(ctx context.Context, now time.Time, reason string) (int, error) {
	n := 0
	recs, err := l.records(ctx)
	if err != nil {
		return n, fmt.Errorf("release leases: %w", err)
	}
	for _, rec := range recs {
		if rec.State != InProgress {
			continue
		}
		released, err := l.release(ctx, rec, now.UTC(), reason)
		if err != nil {
			return n, err
		}
		if released {
			n++
		}
	}
	locks, err := l.store.List(ctx, lockCollection)
	if err != nil {
		return n, fmt.Errorf("release locks: %w", err)
	}
	for _, d := range locks {
		if err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error { return tx.Delete(d.Path) }); err != nil {
			return n, fmt.Errorf("release lock %s: %w", d.Path, err)
		}
		n++
	}
	return n, nil
}

// release fails rec's attempt unless the record moved on since it was listed.
func (l *Ledger) release(ctx context.Context, rec Record, now time.Time, reason string) (released bool, err error) {
	err = l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		cur, ok, err := read[Record](tx, recordPath(rec.Key))
		released = err == nil && ok && cur.State == InProgress &&
			cur.Owner == rec.Owner && cur.Attempt == rec.Attempt
		if !released {
			return err
		}
		cur.State, cur.Reason, cur.FinishedAt, cur.LeaseUntil = Failed, reason, now, time.Time{}
		return l.put(tx, cur)
	})
	if err != nil {
		return false, fmt.Errorf("release %s: %w", rec.Key, err)
	}
	return released, nil
}
