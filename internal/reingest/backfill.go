// Package reingest sends landed files through the file-drop path again:
// backfilling a prefix, re-queueing a fixed quarantine file, and (through
// package sweep) catching up files whose event never came. It drives the
// same ingest path a file drop takes, in this process or through a running
// server, so each piece runs against the cloud, the local server and in
// tests alike.
package reingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

// Lister streams the live objects under a prefix, in name order.
type Lister interface {
	List(ctx context.Context, bucket, prefix string) iter.Seq2[objects.Attrs, error]
}

type LedgerReader interface {
	Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error)
}

// Ingester runs one object generation through the file-drop path and
// returns its final ledger record.
type Ingester interface {
	Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error)
}

// DefaultConcurrency: each object holds a streaming read, a load and a
// quarantine writer, so a handful keep a warehouse busy without crowding
// the functions serving live drops.
const DefaultConcurrency = 4

// Backfill ingests every object under a prefix. It is safe to interrupt and
// to run again: the ledger decides per generation, a finished one is skipped
// and an interrupted one is taken over and repeated with the same load ID,
// which the warehouse commits at most once.
type Backfill struct {
	Objects     Lister
	Ledger      LedgerReader
	Ingest      Ingester
	Concurrency int // default DefaultConcurrency
	// Grace is how long the objects in flight may still finish once ctx is
	// cancelled (Ctrl-C) before they are cancelled too. 0 cancels them at
	// once; either way a re-run resumes without loading a row twice, but an
	// attempt cut short may hold its ledger lease until it expires.
	Grace time.Duration
	// Progress is called after every finished object and once a second,
	// from one goroutine at a time.
	Progress func(Progress)
}

type Outcome struct {
	Object  objects.Attrs
	Skipped bool          // the ledger held a final record before this run looked
	Record  ledger.Record // the final record
	Err     error         // the object needs another run
}

// Run backfills gs://bucket/prefix. An error means the listing failed;
// per-object failures are in the Summary. Once ctx is cancelled it stops
// handing out objects, lets those in flight finish within Grace, and
// returns the Summary so far, Interrupted.
func (b *Backfill) Run(ctx context.Context, bucket, prefix string) (Summary, error) {
	if b.Objects == nil || b.Ledger == nil || b.Ingest == nil {
		return Summary{}, errors.New("backfill: objects, ledger and ingester are required")
	}
	workers := cmp.Or(max(b.Concurrency, 0), DefaultConcurrency)
	start := time.Now()
	sum := Summary{Prefix: "gs://" + bucket + "/" + prefix, Rejects: map[string]int64{}}
	prog := Progress{Total: -1}

	// In-flight objects outlive ctx by Grace, so that Ctrl-C does not cut
	// an attempt between its load and its ledger record.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	stopGrace := context.AfterFunc(ctx, func() {
		if b.Grace <= 0 {
			stopWork()
			return
		}
		t := time.AfterFunc(b.Grace, stopWork)
		context.AfterFunc(workCtx, func() { t.Stop() })
	})
	defer stopGrace()

	// A second listing only counts, for the ETA.
	type count struct{ n, bytes int64 }
	counted := make(chan count, 1)
	countCtx, stopCount := context.WithCancel(ctx)
	defer stopCount()
	go func() {
		var c count
		for a, err := range b.Objects.List(countCtx, bucket, prefix) {
			if err != nil {
				return // the work listing reports it
			}
			if isFolder(a) {
				continue
			}
			c.n++
			c.bytes += a.Size
		}
		counted <- c
	}()

	work := make(chan objects.Attrs)
	// Workers stopping on cancellation may close results before the
	// listing goroutine is done.
	var listErr atomic.Pointer[error]
	var listed atomic.Int64
	go func() {
		defer close(work)
		for a, err := range b.Objects.List(ctx, bucket, prefix) {
			if err != nil {
				if ctx.Err() == nil {
					listErr.Store(&err)
				}
				return
			}
			if isFolder(a) {
				continue
			}
			select {
			case work <- a:
				listed.Add(1)
			case <-ctx.Done():
				return
			}
		}
	}()

	results := make(chan Outcome)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for a := range work {
				if ctx.Err() != nil {
					return // handed out as the run was cancelled: not started
				}
				results <- b.one(workCtx, a)
			}
		})
	}
	go func() { wg.Wait(); close(results) }()

	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	report := func(last *Outcome) {
		prog.Elapsed = time.Since(start)
		prog.Last = last
		if b.Progress != nil {
			b.Progress(prog)
		}
	}
	for open := true; open; {
		select {
		case o, ok := <-results:
			if !ok {
				open = false
				break
			}
			prog.Done++
			prog.DoneBytes += o.Object.Size
			if !o.Skipped {
				prog.WorkBytes += o.Object.Size
				prog.Rows += o.Record.Counts.Read
			}
			sum.add(o, ctx.Err() != nil)
			report(&o)
		case c := <-counted:
			prog.Total, prog.TotalBytes = c.n, c.bytes
			report(nil)
		case <-ticker.C:
			report(nil)
		}
	}
	sum.Listed = listed.Load()
	sum.Interrupted = ctx.Err() != nil
	sum.Seconds = time.Since(start).Seconds()
	if len(sum.Rejects) == 0 {
		sum.Rejects = nil
	}
	if err := listErr.Load(); err != nil {
		return sum, fmt.Errorf("backfill %s: %w", sum.Prefix, *err)
	}
	return sum, nil
}

// isFolder is a console's zero-byte "folder/" placeholder.
func isFolder(a objects.Attrs) bool { return a.Size == 0 && strings.HasSuffix(a.Name, "/") }

func (b *Backfill) one(ctx context.Context, a objects.Attrs) Outcome {
	key := ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}
	rec, ok, err := b.Ledger.Get(ctx, key)
	if err != nil {
		return Outcome{Object: a, Err: fmt.Errorf("read ledger: %w", err)}
	}
	if ok && rec.State.Final() {
		return Outcome{Object: a, Skipped: true, Record: rec}
	}
	rec, err = b.Ingest.Ingest(ctx, a)
	return Outcome{Object: a, Record: rec, Err: err}
}

var (
	_ Lister       = (*objects.GCS)(nil)
	_ LedgerReader = (*ledger.Ledger)(nil)
)
