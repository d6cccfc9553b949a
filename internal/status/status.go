// Package status is the morning report: did last night's files load, how
// many rows were rejected and why, is the real-time view keeping up, and
// what was discarded. It reads the ledger, the warehouse and the stream
// state through small interfaces, so that the same report is built in the
// CLI against the cloud (alpipe status --cloud), in the local server, and
// in tests. It serves its report with Handler but owns no route: the
// server that mounts it chooses where.
package status

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// LedgerLister lists every ledger record, newest first.
type LedgerLister interface {
	List(ctx context.Context) ([]ledger.Record, error)
}

type StreamStatus interface {
	Status(ctx context.Context, now time.Time) ([]stream.AggregationStatus, error)
	DeadLettersPending(ctx context.Context) (int, error)
}

// Sources are where a status report reads from. A nil source leaves its
// section out with a note, so that a half-configured process still answers.
type Sources struct {
	Ledger    LedgerLister
	Warehouse warehouse.Reader // the named reads discard_counts and discard_reasons
	Stream    StreamStatus
	Now       func() time.Time // default time.Now
}

type Options struct {
	Since    time.Duration // how far back files and discards count; default 24h
	MaxFiles int           // files listed, newest first; default 50
}

// DefaultSince is the morning question's horizon: last night's files.
const DefaultSince = 24 * time.Hour

type Report struct {
	Now       time.Time      `json:"now"`
	Since     time.Time      `json:"since"`
	Files     *FilesReport   `json:"files,omitempty"`
	Stream    []StreamReport `json:"stream,omitempty"`
	Discarded *DiscardReport `json:"discarded,omitempty"`
	Problems  []string       `json:"problems,omitempty"` // sections that could not be read
}

// FilesReport is the ledger since Report.Since.
type FilesReport struct {
	States          map[ledger.State]int `json:"states"` // of the files started since Since
	RowsRead        int64                `json:"rows_read"`
	RowsLoaded      int64                `json:"rows_loaded"`
	RowsQuarantined int64                `json:"rows_quarantined"`
	Rejects         map[string]int64     `json:"rejects,omitempty"`
	// Attention lists the files a person may have to act on: every FAILED
	// or IN_PROGRESS one however old, and those REJECTED since Since, or
	// DONE with a reason (loaded, but the refresh left a daily sum out of
	// its column's range: see ingest's "refresh overflow").
	Attention []FileLine  `json:"attention,omitempty"`
	Recent    []FileLine  `json:"recent"` // newest first, up to MaxFiles
	Omitted   int         `json:"omitted,omitempty"`
	Drift     []DriftLine `json:"drift,omitempty"`
}

type FileLine struct {
	Object      string           `json:"object"` // gs://bucket/name#generation
	Feed        string           `json:"feed,omitempty"`
	State       ledger.State     `json:"state"`
	Attempt     int              `json:"attempt"`
	StartedAt   time.Time        `json:"started_at,omitzero"`
	FinishedAt  time.Time        `json:"finished_at,omitzero"`
	Read        int64            `json:"rows_read"`
	Loaded      int64            `json:"rows_loaded"`
	Quarantined int64            `json:"rows_quarantined"`
	Rejects     map[string]int64 `json:"rejects,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	Quarantine  string           `json:"quarantine,omitempty"`
	DuplicateOf string           `json:"duplicate_of,omitempty"`
	Drift       *ledger.Drift    `json:"drift,omitempty"`
	// For IN_PROGRESS: how long the attempt has run, and how long its lease
	// still holds (negative: expired, so the next delivery takes over).
	RunningSeconds   int64 `json:"running_seconds,omitempty"`
	LeaseLeftSeconds int64 `json:"lease_left_seconds,omitempty"`
	LeaseExpired     bool  `json:"lease_expired,omitempty"`
}

type StreamReport struct {
	Aggregation  string    `json:"aggregation"`
	Watermark    time.Time `json:"watermark,omitzero"` // zero: no order accepted yet
	LagSeconds   int64     `json:"lag_seconds"`        // now - watermark
	MaxEventTime time.Time `json:"max_event_time,omitzero"`
	LastAccepted time.Time `json:"last_accepted,omitzero"`
	// OpenWindows counts the open (window, key)s the ticks have folded in;
	// Windows groups them by window, oldest first.
	OpenWindows int          `json:"open_windows"`
	Windows     []WindowLine `json:"windows,omitempty"`
	Outbox      int          `json:"outbox"` // rows waiting for the warehouse
	TickRunning bool         `json:"tick_running,omitempty"`
	// Failing are the windows (with a key: a previous layout's cell) and
	// documents the ticks cannot process; every other window goes on.
	Failing []FailingLine `json:"failing,omitempty"`
}

type FailingLine struct {
	Document    string    `json:"document"`
	WindowStart time.Time `json:"window_start,omitzero"`
	WindowEnd   time.Time `json:"window_end,omitzero"`
	Key         string    `json:"key,omitempty"`
	Since       time.Time `json:"since,omitzero"`
	Error       string    `json:"error"`
}

type WindowLine struct {
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Keys       []string  `json:"keys"`
	OnTimeOwed int       `json:"on_time_owed"` // keys whose ON_TIME pane is still to come
	Panes      int64     `json:"panes"`        // emitted so far, all keys
}

// DiscardReport counts pedidos_descartados since Report.Since, and in all.
type DiscardReport struct {
	Invalid      int64         `json:"invalid"` // dead-lettered
	TooLate      int64         `json:"too_late"`
	InvalidTotal int64         `json:"invalid_total"`
	TooLateTotal int64         `json:"too_late_total"`
	Reasons      []ReasonCount `json:"reasons,omitempty"` // most frequent first
	Pending      int           `json:"pending"`           // dead letters not yet in the warehouse
}

type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// BuildReport reads every source. It never fails as a whole: a source that
// cannot be read leaves its section out and says why in Problems.
func BuildReport(ctx context.Context, src Sources, opt Options) Report {
	opt.Since = cmp.Or(max(opt.Since, 0), DefaultSince)
	opt.MaxFiles = cmp.Or(max(opt.MaxFiles, 0), 50)
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	rep := Report{Now: now().UTC()}
	rep.Since = rep.Now.Add(-opt.Since)
	problem := func(section string, err error) {
		rep.Problems = append(rep.Problems, section+": "+oneLine(err.Error()))
	}

	if src.Ledger == nil {
		problem("files", errors.New("no ledger in this process"))
	} else if recs, err := src.Ledger.List(ctx); err != nil {
		problem("files", err)
	} else {
		rep.Files = filesReport(recs, rep.Now, rep.Since, opt.MaxFiles)
	}

	if src.Stream == nil {
		problem("stream", errors.New("no stream processor in this process"))
	} else if aggs, err := src.Stream.Status(ctx, rep.Now); err != nil {
		problem("stream", err)
	} else {
		for _, a := range aggs {
			rep.Stream = append(rep.Stream, streamReport(a))
		}
	}

	if src.Warehouse == nil {
		problem("discarded", errors.New("no warehouse in this process"))
	} else if d, err := discards(ctx, src.Warehouse, rep.Since); err != nil {
		problem("discarded", err)
	} else {
		rep.Discarded = d
		if src.Stream != nil {
			if n, err := src.Stream.DeadLettersPending(ctx); err != nil {
				problem("discarded", err)
			} else {
				d.Pending = n
			}
		}
	}
	return rep
}

func filesReport(recs []ledger.Record, now, since time.Time, maxFiles int) *FilesReport {
	fr := &FilesReport{States: map[ledger.State]int{}, Recent: []FileLine{}}
	for _, r := range recs {
		recent := !r.StartedAt.Before(since)
		if r.State == ledger.Failed || r.State == ledger.InProgress || (recent && (r.State == ledger.Rejected || r.State == ledger.Done && r.Reason != "")) {
			fr.Attention = append(fr.Attention, fileLine(r, now))
		}
		if !recent {
			continue
		}
		fr.States[r.State]++
		fr.RowsRead += r.Counts.Read
		fr.RowsLoaded += r.Counts.Loaded
		fr.RowsQuarantined += r.Counts.Quarantined
		for code, n := range r.Counts.Rejects {
			if fr.Rejects == nil {
				fr.Rejects = map[string]int64{}
			}
			fr.Rejects[code] += n
		}
		if len(fr.Recent) < maxFiles {
			fr.Recent = append(fr.Recent, fileLine(r, now))
		} else {
			fr.Omitted++
		}
	}
	fr.Drift = driftLines(recs, since)
	return fr
}

func fileLine(r ledger.Record, now time.Time) FileLine {
	l := FileLine{
		Object: r.Key.String(), Feed: r.Feed, State: r.State, Attempt: r.Attempt,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Read: r.Counts.Read, Loaded: r.Counts.Loaded, Quarantined: r.Counts.Quarantined,
		Rejects: r.Counts.Rejects, Reason: r.Reason, Quarantine: r.Quarantine,
		Drift: r.Drift,
	}
	if r.DuplicateOf != nil {
		l.DuplicateOf = r.DuplicateOf.String()
	}
	if r.State == ledger.InProgress {
		l.RunningSeconds = int64(now.Sub(r.StartedAt).Seconds())
		left := r.LeaseUntil.Sub(now)
		l.LeaseLeftSeconds = int64(left.Seconds())
		l.LeaseExpired = left <= 0
	}
	return l
}

func streamReport(a stream.AggregationStatus) StreamReport {
	sr := StreamReport{
		Aggregation: a.Aggregation, Watermark: a.Watermark, LagSeconds: int64(a.Lag.Seconds()),
		MaxEventTime: a.MaxEventTime, LastAccepted: a.LastAccepted,
		OpenWindows: len(a.OpenWindows), Outbox: a.Outbox, TickRunning: !a.TickLeaseUntil.IsZero(),
	}
	for _, f := range a.Failing {
		sr.Failing = append(sr.Failing, FailingLine{Document: f.Path, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd, Key: f.Key, Since: f.Since, Error: f.Error})
	}
	for _, w := range a.OpenWindows { // sorted by start, then key
		n := len(sr.Windows)
		if n == 0 || !sr.Windows[n-1].Start.Equal(w.Start) {
			sr.Windows = append(sr.Windows, WindowLine{Start: w.Start, End: w.End})
			n++
		}
		wl := &sr.Windows[n-1]
		wl.Keys = append(wl.Keys, w.Key)
		wl.Panes += w.Panes
		if w.OnTime == "" || w.OnTime == window.OnTimePending {
			wl.OnTimeOwed++
		}
	}
	return sr
}

func discards(ctx context.Context, r warehouse.Reader, since time.Time) (*DiscardReport, error) {
	c, err := warehouse.ReadDiscardCounts(ctx, r, since)
	if err != nil {
		return nil, fmt.Errorf("count discards: %w", err)
	}
	d := &DiscardReport{InvalidTotal: c.InvalidTotal, Invalid: c.Invalid, TooLateTotal: c.TooLateTotal, TooLate: c.TooLate}
	reasons, err := warehouse.ReadDiscardReasons(ctx, r, since, 10)
	if err != nil {
		return nil, fmt.Errorf("discard reasons: %w", err)
	}
	for _, rc := range reasons {
		d.Reasons = append(d.Reasons, ReasonCount{Reason: rc.Reason, Count: rc.Count})
	}
	return d, nil
}

// DriftLine is one column by which files of a feed differed from their
// contract since Report.Since: when it was first and last seen and in how
// many files, so that an ERP change is dated, not just noticed.
type DriftLine struct {
	Feed      string    `json:"feed"`
	Change    string    `json:"change"` // "added" (not loaded) or "missing"
	Column    string    `json:"column"`
	Files     int       `json:"files"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// driftLines sorts added columns first, then by feed and column.
func driftLines(recs []ledger.Record, since time.Time) []DriftLine {
	type key struct{ feed, change, column string }
	lines := map[key]DriftLine{}
	note := func(r ledger.Record, change string, cols []string) {
		for _, c := range cols {
			k := key{r.Feed, change, c}
			l, ok := lines[k]
			if !ok {
				l = DriftLine{Feed: r.Feed, Change: change, Column: c, FirstSeen: r.StartedAt, LastSeen: r.StartedAt}
			}
			l.Files++
			if r.StartedAt.Before(l.FirstSeen) {
				l.FirstSeen = r.StartedAt
			}
			if r.StartedAt.After(l.LastSeen) {
				l.LastSeen = r.StartedAt
			}
			lines[k] = l
		}
	}
	for _, r := range recs {
		if r.Drift == nil || r.StartedAt.Before(since) {
			continue
		}
		note(r, "added", r.Drift.Added)
		note(r, "missing", r.Drift.Missing)
	}
	// nil without drift: omitted from the JSON.
	return slices.SortedFunc(maps.Values(lines), func(a, b DriftLine) int {
		return cmp.Or(strings.Compare(a.Change, b.Change), strings.Compare(a.Feed, b.Feed),
			strings.Compare(a.Column, b.Column))
	})
}

// Handler answers GET with the report: JSON, or ?format=text; ?since=12h
// and ?files=N shape it.
func Handler(src Sources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		opt, format, err := parseQuery(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep := BuildReport(r.Context(), src, opt)
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = WriteText(w, rep)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	})
}

func parseQuery(r *http.Request) (Options, string, error) {
	q := r.URL.Query()
	var opt Options
	if s := q.Get("since"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return opt, "", fmt.Errorf("since=%q: want a positive duration such as 24h", s)
		}
		opt.Since = d
	}
	if s := q.Get("files"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return opt, "", fmt.Errorf("files=%q: want a positive number", s)
		}
		opt.MaxFiles = n
	}
	format := cmp.Or(q.Get("format"), "json")
	if format != "json" && format != "text" {
		return opt, "", fmt.Errorf("format=%q: want json or text", format)
	}
	return opt, format, nil
}

var (
	_ LedgerLister = (*ledger.Ledger)(nil)
	_ StreamStatus = (*stream.Processor)(nil)
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
			rows = append(rows, []string{render.Thousands(int64(rc.Count)), oneLine(rc.Reason)})
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

// writeFailing lists the windows the ticks cannot process (with a key:
// a previous layout's cell, met during the upgrade), each with its error,
// so that a person sees what to repair; nothing when there are none.
func writeFailing(w io.Writer, fs []FailingLine) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "  failing: %s the ticks cannot process (every other window goes on; these are retried at every tick):\n", render.Counted(len(fs), "window", "windows"))
	for _, f := range fs {
		cell := f.Document
		if !f.WindowStart.IsZero() {
			cell = windowSpan(f.WindowStart, f.WindowEnd)
			if f.Key != "" {
				cell += " " + f.Key
			}
		}
		since := ""
		if !f.Since.IsZero() {
			since = " since " + render.When(f.Since)
		}
		fmt.Fprintf(w, "    %s%s: %s\n", cell, since, oneLine(f.Error))
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
		return fmt.Sprintf("attempt %d: %s", l.Attempt, oneLine(l.Reason))
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
