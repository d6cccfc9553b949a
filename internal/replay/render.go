package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
)

// WriteText renders the report for a person.
func (r Report) WriteText(w io.Writer) error {
	dates := r.Dates
	if dates == "" {
		dates = "all dates"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "replay of %s (%s)\n", r.Source, dates)
	fmt.Fprintf(tw, "read\t%d\n", r.Read)
	fmt.Fprintf(tw, "accepted\t%d\n", r.Accepted)
	fmt.Fprintf(tw, "duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(tw, "invalid\t%d\n", r.Invalid)
	fmt.Fprintf(tw, "outside the dates\t%d\n", r.Skipped)
	fmt.Fprintf(tw, "segments\t%d\n", r.Segments)
	fmt.Fprintf(tw, "windows closed\t%d (one ON_TIME pane each)\n", r.Windows)
	fmt.Fprintf(tw, "panes written\t%d\n", r.Written)
	fmt.Fprintf(tw, "already there\t%d (identical: a re-run adds nothing)\n", r.Unchanged)
	fmt.Fprintf(tw, "refused\t%d (the window has other panes)\n", r.Conflicts)
	if len(r.NotReplayed) > 0 {
		fmt.Fprintf(tw, "not replayed\t%s (the source does not keep their key)\n", strings.Join(r.NotReplayed, ", "))
	}
	if !r.EmittedAt.IsZero() {
		fmt.Fprintf(tw, "final tick\t%s, watermark %s\n", r.EmittedAt.Format(time.RFC3339), r.Watermark.Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.InvalidSamples) > 0 {
		fmt.Fprintf(w, "\ninvalid orders (first %d of %d):\n", len(r.InvalidSamples), r.Invalid)
		for _, s := range r.InvalidSamples {
			fmt.Fprintf(w, "  %s: %s\n", s.ID, s.Reason)
		}
	}
	if len(r.ConflictSamples) > 0 {
		fmt.Fprintf(w, "\nrefused windows (first %d of %d):\n", len(r.ConflictSamples), r.Conflicts)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  AGGREGATION\tWINDOW_START\tKEY\tREPLAY\tEXISTING PANES\tLATEST")
		for _, c := range r.ConflictSamples {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s/%d/%d\t%d\t%s\n", c.Aggregation, c.WindowStart.Format(time.RFC3339), c.Key,
				render.Money(c.Replay.Importe), c.Replay.Pedidos, c.Replay.Unidades, c.Existing, c.Latest)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
