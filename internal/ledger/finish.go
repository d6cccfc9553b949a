package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

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
	now = now.UTC()
	path := recordPath(rec.Key)
	err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path, objectPath(rec.Key))
		if err != nil {
			return err
		}
		cur, ok, err := decodeRecord(docs[0])
		if err != nil {
			return err
		}
		mine := ok && cur.Owner == rec.Owner && cur.Attempt == rec.Attempt
		if mine && cur.State == rec.State {
			return nil
		}
		if !mine || cur.State != InProgress {
			if !ok {
				return fmt.Errorf("%w: no record", ErrLeaseLost)
			}
			return fmt.Errorf("%w: record is %s, attempt %d of %q", ErrLeaseLost, cur.State, cur.Attempt, cur.Owner)
		}
		out := cur
		out.State = rec.State
		out.FinishedAt = now
		out.LeaseUntil = time.Time{}
		out.Feed = rec.Feed
		out.Counts = rec.Counts
		out.Reason = rec.Reason
		out.Quarantine = rec.Quarantine
		out.LoadID = rec.LoadID
		out.AlreadyLoaded = rec.AlreadyLoaded
		out.Drift = rec.Drift
		if out.State == Done {
			var cur current
			if docs[1].Exists {
				if err := json.Unmarshal(docs[1].Data, &cur); err != nil {
					return fmt.Errorf("decode %s: %w", docs[1].Path, err)
				}
			}
			if out.Key.Generation >= cur.Generation {
				d, err := encode(objectPath(out.Key), current{Generation: out.Key.Generation, MD5: out.MD5})
				if err != nil {
					return err
				}
				if err := tx.Set(d); err != nil {
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
	if rec.Owner == "" {
		return fmt.Errorf("ledger: finish without an owner")
	}
	switch rec.State {
	case Done, Rejected, Skipped, Failed:
	default:
		return fmt.Errorf("ledger: cannot finish as %q (want DONE, REJECTED, SKIPPED or FAILED)", rec.State)
	}
	c := rec.Counts
	if c.Read < 0 || c.Loaded < 0 || c.Quarantined < 0 {
		return fmt.Errorf("ledger: negative counts %+v", c)
	}
	// A failed attempt may have stopped half-way; any outcome that stands
	// must account for every row read.
	if rec.State != Failed && c.Read != c.Loaded+c.Quarantined {
		return fmt.Errorf("ledger: rows read %d != loaded %d + quarantined %d", c.Read, c.Loaded, c.Quarantined)
	}
	return nil
}

// Get returns key's record, and whether it exists.
func (l *Ledger) Get(ctx context.Context, key Key) (Record, bool, error) {
	var (
		rec Record
		ok  bool
	)
	err := l.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(recordPath(key))
		if err != nil {
			return err
		}
		rec, ok, err = decodeRecord(docs[0])
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
	docs, err := l.store.List(ctx, recordCollection)
	if err != nil {
		return nil, fmt.Errorf("list ledger: %w", err)
	}
	recs := make([]Record, 0, len(docs))
	for _, d := range docs {
		r, _, err := decodeRecord(d)
		if err != nil {
			return nil, fmt.Errorf("list ledger: %w", err)
		}
		recs = append(recs, r)
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if !recs[i].StartedAt.Equal(recs[j].StartedAt) {
			return recs[i].StartedAt.After(recs[j].StartedAt)
		}
		return recs[i].Key.String() < recs[j].Key.String()
	})
	return recs, nil
}
