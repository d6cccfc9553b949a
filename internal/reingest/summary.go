package reingest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
)

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
		fmt.Fprintf(w, "  %s: %s\n", n.Object, render.OneLine(n.Reason))
	}
}
