package status

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
)

// stateOrder is how the file states are listed: the good news first.
var stateOrder = []ledger.State{ledger.Done, ledger.Duplicate, ledger.Skipped, ledger.Rejected, ledger.Failed, ledger.InProgress}

// WriteText prints a report for a person.
func WriteText(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	since := r.Now.Sub(r.Since).Round(time.Minute)
	fmt.Fprintf(tw, "alpipe status at %s (files and discards of the last %s)\n", render.When(r.Now), span(since))

	if f := r.Files; f != nil {
		total := 0
		var states []string
		for _, s := range stateOrder {
			if n := f.States[s]; n > 0 {
				total += n
				states = append(states, fmt.Sprintf("%s %s", s, render.Thousands(int64(n))))
			}
		}
		fmt.Fprintf(tw, "\nFiles: %s", render.Thousands(int64(total)))
		if len(states) > 0 {
			fmt.Fprintf(tw, " (%s)", strings.Join(states, ", "))
		}
		fmt.Fprintf(tw, "\n  rows: %s read, %s loaded, %s quarantined\n", render.Thousands(f.RowsRead), render.Thousands(f.RowsLoaded), render.Thousands(f.RowsQuarantined))
		if len(f.Rejects) > 0 {
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w, "  quarantined rows by reason:")
			var rows [][]string
			for _, code := range slices.Sorted(maps.Keys(f.Rejects)) {
				rows = append(rows, []string{code, render.Thousands(f.Rejects[code])})
			}
			render.Columns(w, "    ", rows, []render.Kind{render.Text, render.Int})
		}
		if len(f.Attention) > 0 {
			fmt.Fprintln(tw, "  needs attention:")
			for _, l := range f.Attention {
				fmt.Fprintf(tw, "    %s\t%s\t%s\n", l.State, l.Object, attention(l))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if f := r.Files; f != nil && len(f.Recent) > 0 {
		fmt.Fprintln(w, "  newest first:")
		rows := [][]string{{"STARTED", "STATE", "FEED", "READ", "LOADED", "QUARANTINED", "OBJECT"}}
		for _, l := range f.Recent {
			rows = append(rows, []string{render.When(l.StartedAt), string(l.State), cmp.Or(l.Feed, "-"), render.Thousands(l.Read), render.Thousands(l.Loaded), render.Thousands(l.Quarantined), l.Object})
		}
		numbers := []render.Kind{render.Text, render.Text, render.Text, render.Int, render.Int, render.Int}
		render.Columns(w, "    ", rows, numbers)
		if f.Omitted > 0 {
			fmt.Fprintf(w, "    ... and %s older\n", render.Thousands(int64(f.Omitted)))
		}
		title := "  quarantine files (alpipe quarantine get NAME fetches one):\n" // before the first
		for _, l := range f.Recent {
			if l.Quarantine != "" {
				fmt.Fprintf(w, "%s    %s\n", title, l.Quarantine)
				title = ""
			}
		}
	}

	for _, s := range r.Stream {
		fmt.Fprintf(w, "\nStream %s:\n", s.Aggregation)
		if s.Watermark.IsZero() {
			fmt.Fprintln(w, "  watermark: none yet (no order accepted)")
		} else {
			fmt.Fprintf(w, "  watermark: %s, %s behind processing time\n", render.When(s.Watermark), render.Duration(time.Duration(s.LagSeconds)*time.Second))
			fmt.Fprintf(w, "  newest event time: %s, last order accepted at %s\n", render.When(s.MaxEventTime), render.When(s.LastAccepted))
		}
		fmt.Fprintf(w, "  open windows: %s\n", openWindows(len(s.Windows), s.OpenWindows))
		for _, wl := range s.Windows {
			fmt.Fprintf(w, "    %s  %s  %s, ON_TIME owed by %s\n", windowSpan(wl.Start, wl.End), strings.Join(wl.Keys, " "), render.Counted(int(wl.Panes), "pane", "panes"), render.Counted(wl.OnTimeOwed, "key", "keys"))
		}
		writeFailing(w, s.Failing)
		if s.Outbox > 0 {
			fmt.Fprintf(w, "  outbox: %s waiting for the warehouse (the next tick appends them)\n", render.Counted(s.Outbox, "row", "rows"))
		}
		if s.TickRunning {
			fmt.Fprintln(w, "  a tick is running")
		}
	}

	if d := r.Discarded; d != nil {
		fmt.Fprintf(w, "\nDiscarded orders: %s dead-lettered (invalid), %s dropped as too late (all time: %s and %s)\n",
			render.Thousands(int64(d.Invalid)), render.Thousands(int64(d.TooLate)), render.Thousands(int64(d.InvalidTotal)), render.Thousands(int64(d.TooLateTotal)))
		var rows [][]string
		for _, rc := range d.Reasons {
			rows = append(rows, []string{render.Thousands(int64(rc.Count)), render.OneLine(rc.Reason)})
		}
		render.Columns(w, "  ", rows, []render.Kind{render.Int})
		if d.Pending > 0 {
			fmt.Fprintf(w, "  %s waiting for the warehouse\n", render.Counted(d.Pending, "dead letter", "dead letters"))
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "\nNot available:")
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	return nil
}

// writeFailing lists the windows and documents the ticks cannot process, a
// window by its span when its path names one and otherwise by its document,
// each with its error, so that a person sees what to repair; nothing when
// there are none.
func writeFailing(w io.Writer, fs []FailingLine) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "  failing: %s the ticks cannot process (every other window goes on; these are retried at every tick):\n", render.Counted(len(fs), "window", "windows"))
	for _, f := range fs {
		cell := f.Document
		if !f.WindowStart.IsZero() {
			cell = windowSpan(f.WindowStart, f.WindowEnd)
		}
		since := ""
		if !f.Since.IsZero() {
			since = " since " + render.When(f.Since)
		}
		fmt.Fprintf(w, "    %s%s: %s\n", cell, since, render.OneLine(f.Error))
		if !f.WindowStart.IsZero() {
			fmt.Fprintf(w, "      document %s\n", f.Document)
		}
	}
}

func attention(l FileLine) string {
	switch l.State {
	case ledger.InProgress:
		s := fmt.Sprintf("attempt %d running for %s, ", l.Attempt, render.Duration(time.Duration(l.RunningSeconds)*time.Second))
		if l.LeaseExpired {
			return s + "lease expired: the next delivery takes over"
		}
		return s + "lease holds " + render.Duration(time.Duration(l.LeaseLeftSeconds)*time.Second) + " more"
	default:
		return fmt.Sprintf("attempt %d: %s", l.Attempt, render.OneLine(l.Reason))
	}
}

// windowSpan is a window for people: "2026-03-14 17:00 to 18:00 UTC", the
// end's date said when it is another day.
func windowSpan(start, end time.Time) string {
	start, end = start.UTC(), end.UTC()
	to := end.Format("15:04")
	if end.Truncate(24*time.Hour) != start.Truncate(24*time.Hour) && !end.Equal(start.Truncate(24*time.Hour).AddDate(0, 0, 1)) {
		to = end.Format("2006-01-02 15:04")
	}
	return start.Format("2006-01-02 15:04") + " to " + to + " UTC"
}

// openWindows says how many windows hold state and how many keys they
// hold between them: "none", "1 (3 keys)", "4 (16 keys in all)".
func openWindows(windows, keys int) string {
	switch windows {
	case 0:
		return "none"
	case 1:
		return "1 (" + render.Counted(keys, "key", "keys") + ")"
	}
	return render.Thousands(windows) + " (" + render.Counted(keys, "key", "keys") + " in all)"
}

// span is the report's period: whole hours as "24 h", else a Duration.
func span(d time.Duration) string {
	if d > 0 && d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + " h"
	}
	return render.Duration(d)
}
