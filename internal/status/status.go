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
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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

var (
	_ LedgerLister = (*ledger.Ledger)(nil)
	_ StreamStatus = (*stream.Processor)(nil)
)

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
	// Failing are the windows and documents the ticks cannot process; every
	// other window goes on.
	Failing []FailingLine `json:"failing,omitempty"`
}

type FailingLine struct {
	Document    string    `json:"document"`
	WindowStart time.Time `json:"window_start,omitzero"`
	WindowEnd   time.Time `json:"window_end,omitzero"`
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
		rep.Problems = append(rep.Problems, section+": "+render.OneLine(err.Error()))
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
		sr.Failing = append(sr.Failing, FailingLine{Document: f.Path, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd, Since: f.Since, Error: f.Error})
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
