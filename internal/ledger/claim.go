package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Claim decides, in one transaction, whether owner may work on key:
//   - a Final record: AlreadyFinished (Record = it);
//   - InProgress with a live lease: Busy (Record = the holder's);
//   - missing, Failed, or InProgress with an expired lease: if md5 is set
//     and the MD5 index names another key whose record is Done, Rejected
//     or Duplicate, a final Duplicate record is written for key
//     (DuplicateOf = that key) and the answer is DuplicateContent; if that
//     key is InProgress with a live lease, Busy (Record = its record);
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
	now = now.UTC()
	paths := []string{recordPath(key)}
	if md5 != "" {
		paths = append(paths, md5Path(md5), objectPath(key))
	}
	var out Claim
	err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		var err error
		out, err = l.claim(tx, paths, key, md5, owner, now)
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("claim %s: %w", key, err)
	}
	return out, nil
}

// claim is the transaction body; it may run more than once and touches
// nothing but tx.
func (l *Ledger) claim(tx docstore.Tx, paths []string, key Key, md5, owner string, now time.Time) (Claim, error) {
	docs, err := tx.Get(paths...)
	if err != nil {
		return Claim{}, err
	}
	prev, hasPrev, err := decodeRecord(docs[0])
	if err != nil {
		return Claim{}, err
	}
	if hasPrev {
		switch {
		case prev.State.Final():
			return Claim{Decision: AlreadyFinished, Record: prev}, nil
		case prev.State == InProgress && prev.LeaseUntil.After(now):
			return Claim{Decision: Busy, Record: prev}, nil
		}
	}
	var previous *Record
	if hasPrev {
		previous = &prev
	}

	repoint := md5 != ""
	if md5 != "" {
		ix, ok, err := decodeIndex(docs[1])
		if err != nil {
			return Claim{}, err
		}
		if ok && ix.Key == key {
			repoint = false
		}
		// An earlier generation of the same object is a copy only if it is
		// still the object's newest loaded one: restoring an older content
		// (A, B, then A again) must load again, so that the newest
		// generation is what the daily aggregates count.
		if ok && ix.Key != key && ix.Key.Bucket == key.Bucket && ix.Key.Object == key.Object {
			var cur current
			if docs[2].Exists {
				if err := json.Unmarshal(docs[2].Data, &cur); err != nil {
					return Claim{}, fmt.Errorf("decode %s: %w", docs[2].Path, err)
				}
			}
			if cur.Generation != ix.Key.Generation {
				ok = false // not a copy of what the object holds now
			}
		}
		if ok && ix.Key != key {
			odocs, err := tx.Get(recordPath(ix.Key))
			if err != nil {
				return Claim{}, err
			}
			other, found, err := decodeRecord(odocs[0])
			if err != nil {
				return Claim{}, err
			}
			switch {
			// Only content that was really loaded (Done, or a Duplicate of
			// something Done) makes a copy redundant: a Rejected original may
			// have read nothing (its generation was gone).
			case found && (other.State == Done || other.State == Duplicate):
				of := ix.Key
				dup := Record{
					Key:         key,
					State:       Duplicate,
					MD5:         md5,
					Attempt:     prev.Attempt + 1,
					Owner:       owner,
					StartedAt:   now,
					FinishedAt:  now,
					Reason:      fmt.Sprintf("same content (MD5 %s) as %s", md5, of),
					DuplicateOf: &of,
				}
				if err := l.put(tx, dup); err != nil {
					return Claim{}, err
				}
				return Claim{Decision: DuplicateContent, Record: dup, Previous: previous}, nil
			case found && other.State == InProgress && other.LeaseUntil.After(now):
				return Claim{Decision: Busy, Record: other}, nil
			case found && other.State == Failed:
				// The original may have committed its load before failing; a
				// copy loaded now could count the rows twice. Wait for the
				// original's own redelivery to finish it.
				return Claim{Decision: Busy, Record: other}, nil
			}
		}
	}

	rec := Record{
		Key:        key,
		State:      InProgress,
		MD5:        md5,
		Attempt:    prev.Attempt + 1,
		Owner:      owner,
		LeaseUntil: now.Add(l.lease),
		StartedAt:  now,
	}
	if repoint {
		d, err := encode(md5Path(md5), index{Key: key})
		if err != nil {
			return Claim{}, err
		}
		if err := tx.Set(d); err != nil {
			return Claim{}, err
		}
	}
	if err := l.put(tx, rec); err != nil {
		return Claim{}, err
	}
	return Claim{Decision: Proceed, Record: rec, Previous: previous}, nil
}

func (l *Ledger) put(tx docstore.Tx, r Record) error {
	d, err := encode(recordPath(r.Key), r)
	if err != nil {
		return err
	}
	return tx.Set(d)
}
