package reingest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
)

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
