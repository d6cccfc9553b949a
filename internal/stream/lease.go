package stream

import (
	"context"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

func (p *Processor) acquire(ctx context.Context, a aggregation, holder string, now time.Time) (busy bool, err error) {
	err = p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		l, exists, err := readLease(tx, a)
		if err != nil {
			return err
		}
		if busy = exists && l.Holder != holder && now.Before(l.Until); busy {
			return nil
		}
		until := now.Add(p.opts.tickLease)
		// The TTL only tidies up after a tick that died holding the lease.
		return set(tx, a.paths.lease, leaseDoc{Holder: holder, Until: until}, until.Add(24*time.Hour))
	})
	return busy, err
}

func (p *Processor) release(ctx context.Context, a aggregation, holder string) error {
	return p.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		l, exists, err := readLease(tx, a)
		if err != nil || !exists || l.Holder != holder {
			return err // expired and taken over: not ours to delete
		}
		return tx.Delete(a.paths.lease)
	})
}

func readLease(tx docstore.Tx, a aggregation) (leaseDoc, bool, error) {
	var l leaseDoc
	docs, err := tx.Get(a.paths.lease)
	if err != nil {
		return l, false, err
	}
	err = decodeDoc(docs[0], &l)
	return l, docs[0].Exists, err
}
