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
	Clock    func() time.Time // default time.Now
}

type Progress struct {
	Listed     int64 // objects handed out by the listing so far
	Total      int64 // objects under the prefix; -1 until counted
	TotalBytes int64 // their bytes; valid when Total >= 0
	Done       int64 // objects finished, whatever the outcome
	DoneBytes  int64
	Rows       int64 // read by the objects this run ingested
	WorkBytes  int64 // of the objects this run ingested (not skipped)
	Elapsed    time.Duration
	Last       *Outcome // the object that just finished; nil on a timer update
}

func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Rows) / p.Elapsed.Seconds()
}

// ETA is from the bytes still to read at the byte rate of the objects
// ingested so far; false until it can tell.
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

type Outcome struct {
	Object  objects.Attrs
	Skipped bool          // the ledger held a final record before this run looked
	Record  ledger.Record // the final record
	Err     error         // the object needs another run
}

type Summary struct {
	Prefix string `json:"prefix"` // gs://bucket/prefix
	Listed int64  `json:"listed"`
	// Loaded counts files this run finished as DONE, and the rows below are
	// theirs (skipped files' were counted by the run that did them).
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
	Interrupted     bool             `json:"interrupted"` // run it again to continue
	Seconds         float64          `json:"seconds"`
}

// FileNote names an object with why it needs a look.
type FileNote struct {
	Object string `json:"object"` // gs://bucket/name#generation
	Reason string `json:"reason"`
}

// Run backfills gs://bucket/prefix. An error means the listing failed;
// per-object failures are in the Summary. Once ctx is cancelled it stops
// handing out objects, lets those in flight finish within Grace, and
// returns the Summary so far, Interrupted.
func (b *Backfill) Run(ctx context.Context, bucket, prefix string) (Summary, error) {
	if b.Objects == nil || b.Ledger == nil || b.Ingest == nil {
		return Summary{}, errors.New("backfill: objects, ledger and ingester are required")
	}
	clock := b.Clock
	if clock == nil {
		clock = time.Now
	}
	workers := cmp.Or(max(b.Concurrency, 0), DefaultConcurrency)
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

var (
	_ Lister       = (*objects.GCS)(nil)
	_ LedgerReader = (*ledger.Ledger)(nil)
)

// maxNotes bounds each list of files a summary prints; the JSON has all.
const maxNotes = 20

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

type IngestService interface {
	Ingest(ctx context.Context, obj ingest.Object) (ledger.Record, error)
}

// DefaultBusyWait is how long Direct waits for another attempt (the
// deployed function on the same event) before reporting it busy.
const DefaultBusyWait = time.Minute

// Direct ingests in this process through the service IngestCSV runs, so a
// backfill takes exactly the path of a file drop.
type Direct struct {
	Service  IngestService
	BusyWait time.Duration // default DefaultBusyWait; the wait backs off up to 5 s
}

var _ Ingester = Direct{}

// Ingest handles obj as its finalize event would. While another attempt
// holds the generation it waits, as Eventarc's redelivery would.
func (d Direct) Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error) {
	if d.Service == nil {
		return ledger.Record{}, errors.New("direct ingest: no service")
	}
	wait := cmp.Or(max(d.BusyWait, 0), DefaultBusyWait)
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

// ProgressPrinter shows a backfill's progress: on a terminal one line
// redrawn in place (a bar, objects, rows, rate, ETA), otherwise one plain
// log line per finished object, which is what a CI log or a file wants.
type ProgressPrinter struct {
	w     io.Writer
	tty   bool
	every time.Duration

	mu    sync.Mutex
	drawn time.Time
	width int // of the line on screen, to blank it
	last  *Progress
}

// NewProgressPrinter writes to w; tty selects the redrawn line.
func NewProgressPrinter(w io.Writer, tty bool) *ProgressPrinter {
	return &ProgressPrinter{w: w, tty: tty, every: 100 * time.Millisecond}
}

func (p *ProgressPrinter) Update(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		if pr.Last != nil {
			fmt.Fprintln(p.w, plainLine(pr))
		}
		return
	}
	p.last = &pr
	now := time.Now()
	final := pr.Total >= 0 && pr.Done >= pr.Total
	if !final && now.Sub(p.drawn) < p.every {
		return
	}
	p.drawn = now
	p.draw(pr)
}

func (p *ProgressPrinter) draw(pr Progress) {
	line := barLine(pr)
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
	p.last = nil
}

// Finish draws the position the throttle held back and ends the line.
func (p *ProgressPrinter) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		return
	}
	if p.last != nil {
		p.draw(*p.last)
	}
	if p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

const barWidth = 24

func barLine(pr Progress) string {
	var b strings.Builder
	if pr.Total >= 0 {
		filled := 0
		if pr.Total > 0 {
			filled = int(int64(barWidth) * pr.Done / pr.Total)
		}
		b.WriteString("[" + strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled) + "] ")
		fmt.Fprintf(&b, "%s/%s objects", render.Thousands(pr.Done), render.Thousands(pr.Total))
	} else {
		fmt.Fprintf(&b, "%s (listing...)", render.Counted(int(pr.Done), "object", "objects"))
	}
	fmt.Fprintf(&b, "  %s  %s rows/s  %s", render.Counted(int(pr.Rows), "row", "rows"), render.Thousands(int64(pr.RowsPerSecond())), eta(pr))
	return b.String()
}

func plainLine(pr Progress) string {
	o := pr.Last
	total := "?"
	if pr.Total >= 0 {
		total = render.Thousands(pr.Total)
	}
	key := ledger.Key{Bucket: o.Object.Bucket, Object: o.Object.Name, Generation: o.Object.Generation}
	var what string
	switch {
	case o.Err != nil:
		what = "FAILED: " + oneLine(o.Err.Error())
	case o.Skipped:
		what = "skipped: already " + string(o.Record.State)
	default:
		c := o.Record.Counts
		what = fmt.Sprintf("%s rows %s loaded %s quarantined %s", o.Record.State, render.Thousands(c.Read), render.Thousands(c.Loaded), render.Thousands(c.Quarantined))
		if o.Record.Reason != "" {
			what += ": " + oneLine(o.Record.Reason)
		}
	}
	if pr.Rows == 0 {
		// Only skips so far: no row rate to show, and an ETA from skips
		// (which take milliseconds) would promise the loads ahead in 1s.
		return fmt.Sprintf("backfill %s/%s %s %s", render.Thousands(pr.Done), total, key, what)
	}
	return fmt.Sprintf("backfill %s/%s %s %s (%s rows/s, %s)", render.Thousands(pr.Done), total, key, what, render.Thousands(int64(pr.RowsPerSecond())), eta(pr))
}

func eta(pr Progress) string {
	d, ok := pr.ETA()
	if !ok {
		return "ETA ?"
	}
	return "ETA " + d.Round(time.Second).String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
