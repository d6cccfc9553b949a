package ledger

import (
	"context"
	"encoding/json"
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
func (l *Ledger) Lock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	path := lockCollection + "/" + docID(name)
	var taken bool
	err := l.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		taken = false
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		if docs[0].Exists {
			var cur lock
			if err := json.Unmarshal(docs[0].Data, &cur); err != nil {
				return fmt.Errorf("decode %s: %w", path, err)
			}
			if cur.Owner != owner && now.Before(cur.Until) {
				return nil
			}
		}
		d, err := encode(path, lock{Owner: owner, Until: now.Add(ttl)})
		if err != nil {
			return err
		}
		d.ExpireAt = now.Add(ttl).Add(24 * time.Hour) // TTL tidies abandoned locks
		taken = true
		return tx.Set(d)
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
		docs, err := tx.Get(path)
		if err != nil || !docs[0].Exists {
			return err
		}
		var cur lock
		if err := json.Unmarshal(docs[0].Data, &cur); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		if cur.Owner != owner {
			return nil
		}
		return tx.Delete(path)
	})
	if err != nil {
		return fmt.Errorf("unlock %s: %w", name, err)
	}
	return nil
}
