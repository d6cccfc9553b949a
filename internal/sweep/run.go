package sweep

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
)

// Run sweeps once. A non-nil error means the listing or a ledger read
// failed (transient: the scheduler's next call retries) and nothing was
// ingested; ErrBusy means another run holds the lock. Per-object failures
// are in the Summary.
func (s *Sweeper) Run(ctx context.Context) (Summary, error) {
	owner := rand.Text()
	lockName := "sweep/" + s.opts.Bucket
	ok, err := s.ledger.Lock(ctx, lockName, owner, s.opts.Now(), runLockTTL)
	if err != nil {
		return Summary{}, fmt.Errorf("sweep: take the run lock: %w", err)
	}
	if !ok {
		s.opts.Log.InfoContext(ctx, "sweep skipped: another run is in progress", "bucket", s.opts.Bucket)
		return Summary{Busy: true}, ErrBusy
	}
	defer func() {
		// The release must outlive a cancelled run.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if err := s.ledger.Unlock(uctx, lockName, owner); err != nil {
			s.opts.Log.WarnContext(ctx, "sweep lock not released; it expires by itself", "error", err.Error())
		}
	}()

	sum, queue, err := s.find(ctx)
	if err != nil {
		s.opts.Log.ErrorContext(ctx, "sweep failed", "bucket", s.opts.Bucket, "error", err.Error())
		return sum, err
	}
	if len(queue) > 0 {
		s.ingest(ctx, &sum, queue)
	}
	sum.count()
	s.log(ctx, sum)
	return sum, nil
}

// queued is an object to ingest and its line in the Summary.
type queued struct {
	attrs objects.Attrs
	index int
}

// find lists the prefixes and decides for each examined object.
func (s *Sweeper) find(ctx context.Context) (Summary, []queued, error) {
	now := s.opts.Now()
	sum := Summary{Objects: []FoundObject{}}
	var queue []queued
	for _, prefix := range s.opts.Prefixes {
		for a, err := range s.lister.List(ctx, s.opts.Bucket, prefix) {
			if err != nil {
				return sum, nil, fmt.Errorf("sweep: list gs://%s/%s: %w", s.opts.Bucket, prefix, err)
			}
			if !s.opts.examined(a, now) {
				continue
			}
			key := ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}
			rec, ok, err := s.ledger.Get(ctx, key)
			if err != nil {
				return sum, nil, fmt.Errorf("sweep: read ledger %s: %w", key, err)
			}
			v, why := verdict(rec, ok, now)
			if v == Ignore {
				continue
			}
			f := FoundObject{Object: key.String(), Created: a.Created, Found: why, State: rec.State}
			switch {
			case v == Leave:
				f.Outcome, f.Reason = Skipped, "left to the attempt holding it"
			case len(queue) >= s.opts.MaxObjects:
				f.Outcome, f.Reason = Skipped, "over the limit of "+strconv.Itoa(s.opts.MaxObjects)+" objects per run; the next run takes it"
			default:
				queue = append(queue, queued{attrs: a, index: len(sum.Objects)})
			}
			s.opts.Log.WarnContext(ctx, "sweep found an unfinished landing object", "object", f.Object, "created", a.Created, "found", why)
			sum.Objects = append(sum.Objects, f)
		}
	}
	return sum, queue, nil
}

// ingest runs the queue through a backfill, the path an operator's
// `alpipe backfill` takes, and records each outcome in sum.
func (s *Sweeper) ingest(ctx context.Context, sum *Summary, queue []queued) {
	at := make(map[string]int, len(queue))
	for _, q := range queue {
		at[sum.Objects[q.index].Object] = q.index
		sum.Objects[q.index].Outcome, sum.Objects[q.index].Reason = Skipped, "not started: the run was cancelled"
	}
	b := &reingest.Backfill{
		Objects:     queueLister(queue),
		Ledger:      s.ledger,
		Ingest:      s.ingester,
		Concurrency: s.opts.Concurrency,
		Progress: func(p reingest.Progress) {
			if p.Last == nil {
				return
			}
			o := p.Last
			key := ledger.Key{Bucket: o.Object.Bucket, Object: o.Object.Name, Generation: o.Object.Generation}
			if i, ok := at[key.String()]; ok {
				settle(&sum.Objects[i], *o)
			}
		},
	}
	// The queue lister cannot fail, so neither can the backfill's listing.
	_, _ = b.Run(ctx, s.opts.Bucket, "")
}

// settle records what the backfill did with one found object.
func settle(f *FoundObject, o reingest.Outcome) {
	f.State, f.Reason = o.Record.State, o.Record.Reason
	switch {
	case errors.Is(o.Err, ingest.ErrBusy):
		f.Outcome, f.Reason = Skipped, "an event's attempt claimed it meanwhile"
	case o.Err != nil:
		f.Outcome, f.Reason = Failed, o.Err.Error()
	case o.Skipped:
		f.Outcome, f.Reason = Skipped, "finished meanwhile by another attempt"
	case o.Record.State.Final():
		f.Outcome = Ingested
	default:
		f.Outcome = Failed // e.g. FAILED on a permanent warehouse error
	}
}

// queueLister serves the queued objects as a listing, so that a backfill
// ingests exactly them.
type queueLister []queued

func (q queueLister) List(_ context.Context, bucket, prefix string) iter.Seq2[objects.Attrs, error] {
	return func(yield func(objects.Attrs, error) bool) {
		for _, q := range q {
			if q.attrs.Bucket == bucket && strings.HasPrefix(q.attrs.Name, prefix) && !yield(q.attrs, nil) {
				return
			}
		}
	}
}

// log writes the line the sweeper's alert counts: found > 0 means a file
// was missed by its events, or keeps failing.
func (s *Sweeper) log(ctx context.Context, sum Summary) {
	level := slog.LevelInfo
	if sum.Found > 0 {
		level = slog.LevelWarn
	}
	if sum.Failed > 0 {
		level = slog.LevelError
	}
	s.opts.Log.Log(ctx, level, "sweep finished", "bucket", s.opts.Bucket,
		"found", sum.Found, "ingested", sum.Ingested, "failed", sum.Failed, "skipped", sum.Skipped)
}

var (
	_ Lister   = (*objects.GCS)(nil)
	_ Ledger   = (*ledger.Ledger)(nil)
	_ Ingester = reingest.Direct{}
)

// Outcomes of a found object.
const (
	Ingested = "ingested" // this run finished it (DONE, REJECTED, DUPLICATE or SKIPPED)
	Failed   = "failed"   // this run's attempt failed; the next run retries it
	Skipped  = "skipped"  // not attempted: claimed by a live attempt, over the limit, or cancelled
)

// Summary is what a run found and did: Found = Ingested + Failed + Skipped.
// Found > 0 means events were lost or are failing; it is what the alert
// watches.
type Summary struct {
	Found    int           `json:"found"`
	Ingested int           `json:"ingested"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	Objects  []FoundObject `json:"objects"`
	Busy     bool          `json:"busy,omitempty"` // another run held the lock; this one did nothing
}

// FoundObject is one object the run found without a final ledger record.
type FoundObject struct {
	Object  string       `json:"object"` // gs://bucket/name#generation
	Created time.Time    `json:"created"`
	Found   string       `json:"found"` // why it needed the sweep (the ledger as the run found it)
	Outcome string       `json:"outcome"`
	State   ledger.State `json:"state,omitempty"` // after the run's attempt (as found when not attempted)
	Reason  string       `json:"reason,omitempty"`
}

func (s *Summary) count() {
	s.Found = len(s.Objects)
	s.Ingested, s.Failed, s.Skipped = 0, 0, 0
	for _, o := range s.Objects {
		switch o.Outcome {
		case Ingested:
			s.Ingested++
		case Failed:
			s.Failed++
		default:
			s.Skipped++
		}
	}
}
