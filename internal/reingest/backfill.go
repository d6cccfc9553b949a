package reingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/render"
)

// Lister streams the live objects under a prefix, in name order, a page at a
// time (objects.GCS).
type Lister interface {
	List(ctx context.Context, bucket, prefix string) iter.Seq2[objects.Attrs, error]
}

// LedgerReader reads one ledger record (ledger.Ledger, or a local server).
type LedgerReader interface {
	Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error)
}

// Ingester runs one object generation through the file-drop path and
// returns its final ledger record: Direct in this process, or the IngestCSV
// function of a running server.
type Ingester interface {
	Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error)
}

// DefaultConcurrency is how many objects a backfill ingests at once: each
// holds a streaming read, a load and a quarantine writer, so a handful keep
// a warehouse busy without crowding the functions serving live drops.
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
	// Progress, when set, is called after every finished object and once a
	// second, from one goroutine at a time.
	Progress func(Progress)
	// Clock measures rates and elapsed time; default time.Now.
	Clock func() time.Time
}

// Progress is a backfill's position.
type Progress struct {
	Listed     int64 // objects handed out by the listing so far
	Total      int64 // objects under the prefix; -1 until counted
	TotalBytes int64 // their bytes; valid when Total >= 0
	Done       int64 // objects finished, whatever the outcome
	DoneBytes  int64
	Rows       int64 // rows read by the objects this run ingested
	WorkBytes  int64 // bytes of the objects this run ingested (not skipped)
	Elapsed    time.Duration
	Last       *Outcome // the object that just finished; nil on a timer update
}

// RowsPerSecond is the row rate of this run so far.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Rows) / p.Elapsed.Seconds()
}

// ETA estimates the time left from the bytes still to read and the byte
// rate of the objects ingested so far; false until it can tell.
func (p Progress) ETA() (time.Duration, bool) {
	if p.Total < 0 || p.Elapsed <= 0 {
		return 0, false
	}
	if p.Done >= p.Total {
		return 0, true
	}
	if p.TotalBytes > 0 && p.WorkBytes > 0 {
		left := float64(max(p.TotalBytes-p.DoneBytes, 0))
		return time.Duration(left / float64(p.WorkBytes) * float64(p.Elapsed)), true
	}
	if p.Done > 0 {
		return time.Duration(float64(p.Total-p.Done) / float64(p.Done) * float64(p.Elapsed)), true
	}
	return 0, false
}

// Outcome is what a backfill did with one object.
type Outcome struct {
	Object objects.Attrs
	// Skipped: the ledger held a final record before this run looked.
	Skipped bool
	Record  ledger.Record // the final record (the earlier one when Skipped)
	Err     error         // ingestion failed; the object needs another run
}

// Summary is the result of a backfill.
type Summary struct {
	Prefix string `json:"prefix"` // gs://bucket/prefix
	Listed int64  `json:"listed"` // objects the listing handed out
	// Loaded counts files this run finished as DONE, and the rows below are
	// theirs (rows of skipped files were counted by the run that did them).
	Loaded          int64            `json:"loaded"`
	RowsRead        int64            `json:"rows_read"`
	RowsLoaded      int64            `json:"rows_loaded"`
	RowsQuarantined int64            `json:"rows_quarantined"`
	Rejects         map[string]int64 `json:"rejects,omitempty"` // quarantined rows per reject code
	Skipped         int64            `json:"skipped"`           // final in the ledger before this run
	NoContract      int64            `json:"no_contract"`       // recorded SKIPPED: no feed claims the name
	Duplicates      []FileNote       `json:"duplicates,omitempty"`
	Rejected        []FileNote       `json:"rejected,omitempty"` // whole file refused
	Failed          []FileNote       `json:"failed,omitempty"`
	// Interrupted: the run was cancelled before the listing was exhausted;
	// run it again to continue.
	Interrupted bool    `json:"interrupted"`
	Seconds     float64 `json:"seconds"` // wall time of the run
}

// FileNote names an object with why it needs a look.
type FileNote struct {
	Object string `json:"object"` // gs://bucket/name#generation
	Reason string `json:"reason"`
}

// Run backfills gs://bucket/prefix. A non-nil error means the listing
// failed (a missing bucket, no access); per-object failures are in the
// Summary. When ctx is cancelled it stops handing out objects, lets those in
// flight finish within Grace, and returns the Summary so far with
// Interrupted set.
func (b *Backfill) Run(ctx context.Context, bucket, prefix string) (Summary, error) {
	if b.Objects == nil || b.Ledger == nil || b.Ingest == nil {
		return Summary{}, errors.New("backfill: objects, ledger and ingester are required")
	}
	clock := b.Clock
	if clock == nil {
		clock = time.Now
	}
	workers := b.Concurrency
	if workers <= 0 {
		workers = DefaultConcurrency
	}
	start := clock()
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

	// A second listing only counts, for the ETA; it races ahead of the
	// work and holds nothing but two numbers.
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
	// A worker that stops on cancellation may let results close before the
	// listing goroutine is done: listErr is read atomically.
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
		prog.Listed = listed.Load()
		prog.Elapsed = clock().Sub(start)
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
	sum.Seconds = clock().Sub(start).Seconds()
	if len(sum.Rejects) == 0 {
		sum.Rejects = nil
	}
	if err := listErr.Load(); err != nil {
		return sum, fmt.Errorf("backfill %s: %w", sum.Prefix, *err)
	}
	return sum, nil
}

// isFolder skips the zero-byte "folder/" placeholders consoles create.
func isFolder(a objects.Attrs) bool { return a.Size == 0 && strings.HasSuffix(a.Name, "/") }

// one ingests a, unless the ledger already holds its final record.
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

func (s *Summary) add(o Outcome, interrupted bool) {
	name := ledger.Key{Bucket: o.Object.Bucket, Object: o.Object.Name, Generation: o.Object.Generation}.String()
	switch {
	case o.Err != nil:
		reason := o.Err.Error()
		if interrupted {
			reason = "interrupted (a re-run resumes it): " + reason
		}
		s.Failed = append(s.Failed, FileNote{Object: name, Reason: reason})
		return
	case o.Skipped:
		s.Skipped++
		return
	}
	r := o.Record
	switch r.State {
	case ledger.Done:
		s.Loaded++
	case ledger.Rejected:
		s.Rejected = append(s.Rejected, FileNote{Object: name, Reason: r.Reason})
	case ledger.Skipped:
		s.NoContract++
	case ledger.Duplicate:
		s.Duplicates = append(s.Duplicates, FileNote{Object: name, Reason: r.Reason})
	default:
		s.Failed = append(s.Failed, FileNote{Object: name, Reason: fmt.Sprintf("ended %s: %s", r.State, r.Reason)})
		return
	}
	s.RowsRead += r.Counts.Read
	s.RowsLoaded += r.Counts.Loaded
	s.RowsQuarantined += r.Counts.Quarantined
	for code, n := range r.Counts.Rejects {
		s.Rejects[code] += n
	}
}

var _ Lister = (*objects.GCS)(nil)

var _ LedgerReader = (*ledger.Ledger)(nil)

// maxNotes bounds each list of files a summary prints; the JSON form has
// them all.
const maxNotes = 20

// WriteSummary prints a backfill summary for a person.
func WriteSummary(w io.Writer, s Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	elapsed := time.Duration(s.Seconds * float64(time.Second)).Round(100 * time.Millisecond)
	fmt.Fprintf(tw, "backfill %s: %s in %s\n", s.Prefix, render.Counted(int(s.Listed), "object", "objects"), elapsed)
	fmt.Fprintf(tw, "  loaded:\t%s, %s loaded of %s read, %s quarantined\n",
		render.Counted(int(s.Loaded), "file", "files"), render.Counted(int(s.RowsLoaded), "row", "rows"), render.Thousands(s.RowsRead), render.Thousands(s.RowsQuarantined))
	fmt.Fprintf(tw, "  skipped:\t%d already final in the ledger\n", s.Skipped)
	fmt.Fprintf(tw, "  duplicates:\t%d (same content as an earlier object)\n", len(s.Duplicates))
	if s.NoContract > 0 {
		fmt.Fprintf(tw, "  no contract:\t%d (no feed claims the name)\n", s.NoContract)
	}
	fmt.Fprintf(tw, "  rejected files:\t%d\n", len(s.Rejected))
	fmt.Fprintf(tw, "  failed:\t%d\n", len(s.Failed))
	if len(s.Rejects) > 0 {
		fmt.Fprintln(tw, "quarantined rows by reason:")
		for _, code := range slices.Sorted(maps.Keys(s.Rejects)) {
			fmt.Fprintf(tw, "  %s\t%s\n", code, render.Thousands(s.Rejects[code]))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	notes(w, "duplicates", s.Duplicates)
	notes(w, "rejected files", s.Rejected)
	notes(w, "failed", s.Failed)
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted: run the same command again to resume; nothing is loaded twice")
	} else if len(s.Failed) > 0 {
		fmt.Fprintln(w, "some objects failed: run the same command again to retry them")
	}
	return nil
}

func notes(w io.Writer, title string, ns []FileNote) {
	if len(ns) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for i, n := range ns {
		if i == maxNotes {
			fmt.Fprintf(w, "  ... and %d more (--format json lists them all)\n", len(ns)-maxNotes)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", n.Object, oneLine(n.Reason))
	}
}

// IngestService is the file-drop core (ingest.Service).
type IngestService interface {
	Ingest(ctx context.Context, obj ingest.Object) (ledger.Record, error)
}

// DefaultBusyWait is how long Direct waits for another attempt (the
// deployed function handling the same finalize event) to finish a
// generation before reporting it busy.
const DefaultBusyWait = time.Minute

// Direct ingests in this process through the same service the IngestCSV
// function runs, so a backfill with cloud credentials takes exactly the path
// of a file drop.
type Direct struct {
	Service  IngestService
	BusyWait time.Duration // default DefaultBusyWait; the wait backs off up to 5 s
}

var _ Ingester = Direct{}

// Ingest handles obj as its finalize event would. While another attempt
// holds the generation it waits, as Eventarc's redelivery would, and then
// reads the outcome that attempt recorded.
func (d Direct) Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error) {
	if d.Service == nil {
		return ledger.Record{}, errors.New("direct ingest: no service")
	}
	wait := d.BusyWait
	if wait <= 0 {
		wait = DefaultBusyWait
	}
	o := ingest.Object{Bucket: obj.Bucket, Name: obj.Name, Generation: obj.Generation, MD5: obj.MD5, Size: obj.Size}
	deadline := time.Now().Add(wait)
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		rec, err := d.Service.Ingest(ctx, o)
		if !errors.Is(err, ingest.ErrBusy) || time.Now().Add(delay).After(deadline) {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, fmt.Errorf("%w (gave up waiting: %w)", err, ctx.Err())
		case <-time.After(delay):
		}
	}
}
