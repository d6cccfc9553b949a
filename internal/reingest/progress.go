package reingest

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
)

type Progress struct {
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
		what = "FAILED: " + render.OneLine(o.Err.Error())
	case o.Skipped:
		what = "skipped: already " + string(o.Record.State)
	default:
		c := o.Record.Counts
		what = fmt.Sprintf("%s rows %s loaded %s quarantined %s", o.Record.State, render.Thousands(c.Read), render.Thousands(c.Loaded), render.Thousands(c.Quarantined))
		if o.Record.Reason != "" {
			what += ": " + render.OneLine(o.Record.Reason)
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
