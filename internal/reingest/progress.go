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

// NewProgressPrinter writes to w; tty selects the redrawn line (decide it
// with golang.org/x/term.IsTerminal on w's file descriptor).
func NewProgressPrinter(w io.Writer, tty bool) *ProgressPrinter {
	return &ProgressPrinter{w: w, tty: tty, every: 100 * time.Millisecond}
}

// Update is a Backfill.Progress callback.
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

// Finish draws the last position if the throttle held it back and ends the
// redrawn line, so that what follows starts on its own.
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
