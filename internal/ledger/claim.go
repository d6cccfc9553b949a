package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Claim decides, in one transaction, whether owner may work on key:
//   - a Final record: AlreadyFinished (Record = it);
//   - InProgress with a live lease: Busy (Record = the holder's);
//   - missing, Failed, or InProgress with an expired lease: if md5 is set
//     and the MD5 index names another key whose record is Done or
//     Duplicate, a final Duplicate record is written for key (DuplicateOf =
//     that key) and the answer is DuplicateContent; if that key is
//     InProgress with a live lease, or Failed, Busy (Record = its record);
//     otherwise the index is pointed at key, an InProgress record with
//     Attempt = previous+1, Owner = owner, LeaseUntil = now+Lease is
//     written, and the answer is Proceed.
//
// An empty md5 (composite objects have none) never deduplicates.
func (l *Ledger) Claim(ctx context.Context, key Key, md5, owner string, now time.Time) (Claim, error) {
	if err := key.validate(); err != nil {
		return Claim{}, err
	}
	if owner == "" {
		return Claim{}, errors.New("ledger: claim without an owner")
	}
	var out Claim
	err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) (err error) {
		out, err = l.claim(tx, key, md5, owner, now.UTC())
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("claim %s: %w", key, err)
	}
	return out, nil
}

// claim is the transaction body; it may run more than once and touches
// nothing but tx.
func (l *Ledger) claim(tx docstore.Tx, key Key, md5, owner string, now time.Time) (Claim, error) {
	paths := []string{recordPath(key)}
	if md5 != "" {
		paths = append(paths, md5Path(md5), objectPath(key))
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return Claim{}, err
	}
	prev, hasPrev, err := decode[Record](docs[0])
	switch {
	case err != nil:
		return Claim{}, err
	case hasPrev && prev.State.Final():
		return Claim{Decision: AlreadyFinished, Record: prev}, nil
	case hasPrev && prev.State == InProgress && prev.LeaseUntil.After(now):
		return Claim{Decision: Busy, Record: prev}, nil
	}
	var previous *Record
	if hasPrev {
		previous = &prev
	}

	repoint := md5 != ""
	if md5 != "" {
		ix, ok, err := decode[index](docs[1])
		if err != nil {
			return Claim{}, err
		}
		repoint = !ok || ix.Key != key
		// An earlier generation of the same object is a copy only if it is
		// still the object's newest loaded one: restoring an older content
		// (A, B, then A again) must load again, so that the newest
		// generation is what the daily aggregates count.
		if ok && ix.Key != key && ix.Key.Bucket == key.Bucket && ix.Key.Object == key.Object {
			cur, _, err := decode[current](docs[2])
			if err != nil {
				return Claim{}, err
			}
			ok = cur.Generation == ix.Key.Generation
		}
		if ok && ix.Key != key {
			other, found, err := read[Record](tx, recordPath(ix.Key))
			switch {
			case err != nil:
				return Claim{}, err
			// Only content that was really loaded (Done, or a Duplicate of
			// something Done) makes a copy redundant: a Rejected original may
			// have read nothing (its generation was gone).
			case found && (other.State == Done || other.State == Duplicate):
				of := ix.Key
				dup := Record{Key: key, State: Duplicate, MD5: md5, Attempt: prev.Attempt + 1, Owner: owner,
					StartedAt: now, FinishedAt: now, Reason: fmt.Sprintf("same content (MD5 %s) as %s", md5, of), DuplicateOf: &of}
				if err := l.put(tx, dup); err != nil {
					return Claim{}, err
				}
				return Claim{Decision: DuplicateContent, Record: dup, Previous: previous}, nil
			// A Failed original may have committed its load before failing; a
			// copy loaded now could count the rows twice. Wait for the
			// original's own redelivery to finish it.
			case found && (other.State == InProgress && other.LeaseUntil.After(now) || other.State == Failed):
				return Claim{Decision: Busy, Record: other}, nil
			}
		}
	}

	rec := Record{Key: key, State: InProgress, MD5: md5, Attempt: prev.Attempt + 1, Owner: owner, LeaseUntil: now.Add(l.lease), StartedAt: now}
	if repoint {
		if err := set(tx, docstore.Doc{Path: md5Path(md5)}, index{Key: key}); err != nil {
			return Claim{}, err
		}
	}
	if err := l.put(tx, rec); err != nil {
		return Claim{}, err
	}
	return Claim{Decision: Proceed, Record: rec, Previous: previous}, nil
}

func (l *Ledger) put(tx docstore.Tx, r Record) error {
	return set(tx, docstore.Doc{Path: recordPath(r.Key)}, r)
}

// Finish records the outcome of the attempt that rec.Owner holds: rec is
// the record Claim returned, with State (Done, Rejected, Skipped or
// Failed), Feed, Counts, Reason, Quarantine, LoadID, AlreadyLoaded and Drift
// filled in; the rest is kept from the stored record. If another owner took
// the key over it returns ErrLeaseLost and changes nothing. Repeating a
// Finish that already committed (a retry after an ambiguous error) is a
// no-op.
func (l *Ledger) Finish(ctx context.Context, rec Record, now time.Time) error {
	if err := checkOutcome(rec); err != nil {
		return fmt.Errorf("finish %s: %w", rec.Key, err)
	}
	err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(recordPath(rec.Key), objectPath(rec.Key))
		if err != nil {
			return err
		}
		cur, ok, err := decode[Record](docs[0])
		mine := ok && cur.Owner == rec.Owner && cur.Attempt == rec.Attempt
		switch {
		case err != nil || mine && cur.State == rec.State:
			return err
		case !ok:
			return fmt.Errorf("%w: no record", ErrLeaseLost)
		case !mine || cur.State != InProgress:
			return fmt.Errorf("%w: record is %s, attempt %d of %q", ErrLeaseLost, cur.State, cur.Attempt, cur.Owner)
		}
		// Everything but the outcome is kept from the stored record.
		out := cur
		out.State = rec.State
		out.FinishedAt = now.UTC()
		out.LeaseUntil = time.Time{}
		out.Feed = rec.Feed
		out.Counts = rec.Counts
		out.Reason = rec.Reason
		out.Quarantine = rec.Quarantine
		out.LoadID = rec.LoadID
		out.AlreadyLoaded = rec.AlreadyLoaded
		out.Drift = rec.Drift
		if out.State == Done {
			obj, _, err := decode[current](docs[1])
			if err != nil {
				return err
			}
			if out.Key.Generation >= obj.Generation {
				if err := set(tx, docstore.Doc{Path: objectPath(out.Key)}, current{Generation: out.Key.Generation, MD5: out.MD5}); err != nil {
					return err
				}
			}
		}
		return l.put(tx, out)
	})
	if err != nil {
		return fmt.Errorf("finish %s: %w", rec.Key, err)
	}
	return nil
}

func checkOutcome(rec Record) error {
	if err := rec.Key.validate(); err != nil {
		return err
	}
	c := rec.Counts
	switch {
	case rec.Owner == "":
		return fmt.Errorf("ledger: finish without an owner")
	case rec.State != Done && rec.State != Rejected && rec.State != Skipped && rec.State != Failed:
		return fmt.Errorf("ledger: cannot finish as %q (want DONE, REJECTED, SKIPPED or FAILED)", rec.State)
	case c.Read < 0 || c.Loaded < 0 || c.Quarantined < 0:
		return fmt.Errorf("ledger: negative counts %+v", c)
	// A failed attempt may have stopped half-way; any outcome that stands
	// must account for every row read.
	case rec.State != Failed && c.Read != c.Loaded+c.Quarantined:
		return fmt.Errorf("ledger: rows read %d != loaded %d + quarantined %d", c.Read, c.Loaded, c.Quarantined)
	}
	return nil
}

// Get returns key's record, and whether it exists.
func (l *Ledger) Get(ctx context.Context, key Key) (rec Record, ok bool, err error) {
	err = l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		rec, ok, err = read[Record](tx, recordPath(key))
		return err
	})
	if err != nil {
		return Record{}, false, fmt.Errorf("get ledger record %s: %w", key, err)
	}
	return rec, ok, nil
}

// List returns every record, newest StartedAt first (ties by key). It is
// not a snapshot: records may change while it reads.
func (l *Ledger) List(ctx context.Context) ([]Record, error) {
	recs, err := l.records(ctx)
	if err != nil {
		return nil, fmt.Errorf("list ledger: %w", err)
	}
	slices.SortStableFunc(recs, func(a, b Record) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(a.Key.String(), b.Key.String()))
	})
	return recs, nil
}

// records reads every record, in path order.
func (l *Ledger) records(ctx context.Context) ([]Record, error) {
	docs, err := l.store.List(ctx, recordCollection)
	if err != nil {
		return nil, err
	}
	recs := make([]Record, 0, len(docs))
	for _, d := range docs {
		r, _, err := decode[Record](d)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}
