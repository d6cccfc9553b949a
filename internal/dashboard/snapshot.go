package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// Snapshot is the JSON the page renders (GET /api/dashboard); every time in
// it is UTC. A null part could not be read here, and Errors says why.
type Snapshot struct {
	Aggregation string     `json:"aggregation"`
	Now         time.Time  `json:"now"`
	Filter      *Filter    `json:"filter,omitempty"` // absent for the default view
	Range       Range      `json:"range"`
	Watermark   *Watermark `json:"watermark"` // null before any order
	Freshness   Freshness  `json:"freshness"`
	Bars        []Bar      `json:"bars"`
	// Countries are those ventas_hora_pais holds in the range, whatever
	// the aggregation chosen.
	Countries []string   `json:"countries"`
	Key       string     `json:"key"` // the chosen aggregation's, as declared
	Window    WindowDecl `json:"window"`
	Keys      []string   `json:"keys"` // the key picker's choices (pickerKeys)
	Discards  Discards   `json:"discards"`
	// OpenWindows is null when the stream's state cannot be read here.
	OpenWindows *OpenWindows `json:"open_windows"`
	Files       []File       `json:"files"`
	// Monitor is null where the process keeps no Monitor.
	Monitor *Monitoring       `json:"monitor"`
	Errors  map[string]string `json:"errors,omitempty"` // by part: bars, stream, discards, watermark, files, backlog
}

// Freshness tells a quiet page apart from a stalled pipeline; null before
// any order accepted or file loaded.
type Freshness struct {
	LastOrderAccepted *time.Time  `json:"last_order_accepted"` // as the last tick saw it
	LastFileLoaded    *LoadedFile `json:"last_file_loaded"`    // finished as DONE
}

type LoadedFile struct {
	Bucket     string    `json:"bucket"`
	Name       string    `json:"name"`
	Generation int64     `json:"generation"`
	FinishedAt time.Time `json:"finished_at"`
}

type Watermark struct {
	At         time.Time `json:"at"`
	LagSeconds int64     `json:"lag_seconds"` // durations in JSON are seconds, nothing else
}

// Bar is one (window, key) of the view: its current value and the timing
// of the pane that set it.
type Bar struct {
	WindowStart time.Time   `json:"window_start"`
	WindowEnd   time.Time   `json:"window_end"`
	Pais        string      `json:"pais"`
	Importe     numeric.Dec `json:"importe"` // a JSON string with its scale ("65.40"): money stays exact up to the page
	Pedidos     int64       `json:"pedidos"`
	Unidades    int64       `json:"unidades"`
	Timing      string      `json:"timing"` // EARLY, ON_TIME or LATE
	PaneIndex   int64       `json:"pane_index"`
}

// MarshalJSON writes Importe with its scale, "65.40" (numeric.Dec alone
// writes "65.4").
func (b Bar) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		WindowStart time.Time `json:"window_start"`
		WindowEnd   time.Time `json:"window_end"`
		Pais        string    `json:"pais"`
		Importe     string    `json:"importe"`
		Pedidos     int64     `json:"pedidos"`
		Unidades    int64     `json:"unidades"`
		Timing      string    `json:"timing"`
		PaneIndex   int64     `json:"pane_index"`
	}{b.WindowStart, b.WindowEnd, b.Pais, render.Money(b.Importe), b.Pedidos, b.Unidades, b.Timing, b.PaneIndex})
}

// File is one ledger record as the page lists it.
type File struct {
	Object        string           `json:"object"` // gs://bucket/object#generation
	Bucket        string           `json:"bucket"`
	Name          string           `json:"name"`
	Generation    int64            `json:"generation"`
	State         ledger.State     `json:"state"`
	Feed          string           `json:"feed,omitempty"`
	Read          int64            `json:"read"`
	Loaded        int64            `json:"loaded"`
	Quarantined   int64            `json:"quarantined"`
	Rejects       map[string]int64 `json:"rejects,omitempty"`
	Reason        string           `json:"reason,omitempty"`
	StartedAt     time.Time        `json:"started_at,omitzero"`
	FinishedAt    time.Time        `json:"finished_at,omitzero"`
	Quarantine    string           `json:"quarantine,omitempty"`
	QuarantineURL string           `json:"quarantine_url,omitempty"`
}

var errNotConfigured = errors.New("not configured in this process")

// TakeFiltered reads the sources at once (a BigQuery query takes about a
// second) and assembles a Snapshot: two warehouse queries whatever the
// data, each bounded on its partitioning column, so a page left open costs
// a fixed amount per refresh, not one that grows with the days kept. A
// failing source fills Errors: the page shows what it can.
func TakeFiltered(ctx context.Context, src Source, f Filter) Snapshot {
	src = src.withDefaults()
	now := src.Now().UTC()
	since := now.Add(-DefaultRange)
	snap := Snapshot{
		Aggregation: src.Aggregation, Now: now, Bars: []Bar{}, Files: []File{}, Countries: []string{}, Keys: []string{},
		Discards: Discards{Since: since, LatestDeadLetters: []Discard{}, LatestTooLate: []Discard{}},
	}
	if f.narrows() {
		snap.Filter = &f
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = map[string]string{}
	)
	fail := func(part string, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs[part] = err.Error()
	}
	decl, err := declarationOf(src.Aggregation)
	if err != nil {
		fail("bars", err)
	}
	snap.Key, snap.Window = decl.key, decl.window
	// The stream first: its newest event time ends the default range.
	st, err := readStream(ctx, src, now)
	if err != nil {
		fail("stream", err)
	} else {
		snap.OpenWindows = &st.open
		if !st.lastAccepted.IsZero() {
			snap.Freshness.LastOrderAccepted = &st.lastAccepted
		}
	}
	var newest time.Time
	if err == nil && decl.key != "" {
		newest = newestEnd(st, decl)
	}
	rng := rangeOf(f, now, newest)
	snap.Range = rng
	var countries []string
	wg.Go(func() {
		if decl.key == "" {
			return // the declaration's error is the bars' already
		}
		bars, err := readBars(ctx, src, f, rng, decl)
		if err != nil {
			fail("bars", err)
			return
		}
		snap.Bars = bars
	})
	wg.Go(func() {
		sum, err := readSummary(ctx, src, since, rng)
		if err != nil {
			fail("discards", err)
			return
		}
		snap.Discards, snap.Countries = sum.discards, sum.countries
		if decl.key == "pais" {
			countries = sum.countries
		}
	})
	wg.Go(func() {
		if src.Watermarks == nil {
			fail("watermark", errNotConfigured)
			return
		}
		w, err := src.Watermarks.Watermark(ctx, src.Aggregation)
		if err != nil {
			fail("watermark", fmt.Errorf("read watermark of %s: %w", src.Aggregation, err))
			return
		}
		snap.Watermark = watermarkAt(w, now)
	})
	wg.Go(func() {
		if src.Ledger == nil {
			fail("files", errNotConfigured)
			return
		}
		recs, err := src.Ledger.List(ctx)
		if err != nil {
			fail("files", err)
			return
		}
		snap.Files, snap.Freshness.LastFileLoaded = lastFiles(recs, src), lastLoaded(recs)
	})
	if src.Monitor != nil {
		from, until := monitorRange(f, now)
		m := src.Monitor.Read(src.Aggregation, from, until)
		if src.Backlog != nil {
			if b, err := src.Backlog.Backlog(ctx); err != nil {
				fail("backlog", fmt.Errorf("read the backlog: %w", err))
			} else {
				m.Backlog, m.BacklogNote = &b, ""
			}
		}
		snap.Monitor = &m
	}
	wg.Wait()
	snap.Keys = pickerKeys(snap.Bars, countries, slices.Concat(f.Paises, f.Keys))
	if len(errs) > 0 {
		snap.Errors = errs
	}
	return snap
}

// monitorRange is the processing time the panel covers: the filter's days
// (up to now at the latest), else the DefaultRange up to now. The charts
// follow event time, which may be months older.
func monitorRange(f Filter, now time.Time) (from, until time.Time) {
	from, until = now.Add(-DefaultRange), now
	if !f.From.IsZero() {
		from = f.From
	}
	if !f.To.IsZero() && f.until().Before(now) {
		until = f.until()
	}
	if !from.Before(until) {
		from = until.Add(-DefaultRange)
	}
	return from, until
}

func watermarkAt(w, now time.Time) *Watermark {
	if w.IsZero() {
		return nil
	}
	lag := now.Sub(w).Truncate(time.Second)
	return &Watermark{At: w.UTC(), LagSeconds: int64(lag / time.Second)}
}

func lastFiles(recs []ledger.Record, src Source) []File {
	recs = recs[:min(src.Files, len(recs))]
	out := make([]File, len(recs))
	for i, r := range recs {
		out[i] = File{
			Object: r.Key.String(), Bucket: r.Key.Bucket, Name: r.Key.Object, Generation: r.Key.Generation,
			State: r.State, Feed: r.Feed, Reason: r.Reason, Quarantine: r.Quarantine,
			Read: r.Counts.Read, Loaded: r.Counts.Loaded, Quarantined: r.Counts.Quarantined, Rejects: r.Counts.Rejects,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		}
		if r.Quarantine != "" && src.QuarantineBucket != "" {
			out[i].QuarantineURL = downloadURL(src.DownloadBase, src.QuarantineBucket, r.Quarantine)
		}
	}
	return out
}

// lastLoaded is the newest DONE record by finish time (List orders by
// start, and a long load can finish after a later short one).
func lastLoaded(recs []ledger.Record) *LoadedFile {
	var best *ledger.Record
	for i, r := range recs {
		if r.State == ledger.Done && !r.FinishedAt.IsZero() && (best == nil || r.FinishedAt.After(best.FinishedAt)) {
			best = &recs[i]
		}
	}
	if best == nil {
		return nil
	}
	return &LoadedFile{Bucket: best.Key.Bucket, Name: best.Key.Object, Generation: best.Key.Generation, FinishedAt: best.FinishedAt.UTC()}
}

func downloadURL(base, bucket, object string) string {
	return base + "download/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(object) + "?alt=media"
}

// OpenWindows are the (window, country) cells the stream still holds state
// for, as of the last tick, the newest first. A failing window's countries
// are not known: it is in Failing, not in Windows.
type OpenWindows struct {
	Cells   int          `json:"cells"`
	Windows int          `json:"windows"`
	Latest  []OpenWindow `json:"latest"`
	// Failing are the windows the tick cannot process, oldest first, as
	// many as Latest: every other window goes on, these are retried at
	// every tick until fixed.
	Failing      []FailingCell `json:"failing"`
	FailingCells int           `json:"failing_cells"`
}

// FailingCell is a window the tick cannot process (with Pais: a previous
// state layout's cell), or a document Status cannot read.
type FailingCell struct {
	WindowStart *time.Time `json:"window_start"` // null when the document names no window
	WindowEnd   *time.Time `json:"window_end"`
	Pais        string     `json:"pais"`     // "" for a whole window
	Document    string     `json:"document"` // its path in the state store
	Error       string     `json:"error"`
	Since       *time.Time `json:"since"` // first failing tick; null when unknown
}

type OpenWindow struct {
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	Pais        string    `json:"pais"`
	Panes       int64     `json:"panes"`   // emitted so far
	OnTime      string    `json:"on_time"` // whether its ON_TIME pane is still owed
}

type streamPart struct {
	open         OpenWindows
	lastAccepted time.Time
	maxEventTime time.Time // M, the latest event time accepted; zero before any
}

func readStream(ctx context.Context, src Source, now time.Time) (streamPart, error) {
	if src.Stream == nil {
		return streamPart{}, errNotConfigured
	}
	all, err := src.Stream.Status(ctx, now)
	if err != nil {
		return streamPart{}, fmt.Errorf("read stream status: %w", err)
	}
	i := slices.IndexFunc(all, func(s stream.AggregationStatus) bool { return s.Aggregation == src.Aggregation })
	if i < 0 {
		return streamPart{}, fmt.Errorf("aggregation %q is not configured in the stream processor", src.Aggregation)
	}
	return streamOf(all[i], src.Latest), nil
}

// streamOf keeps the newest latest cells (Status lists oldest window first).
func streamOf(st stream.AggregationStatus, latest int) streamPart {
	p := streamPart{lastAccepted: st.LastAccepted.UTC(), maxEventTime: st.MaxEventTime.UTC(), open: OpenWindows{Cells: len(st.OpenWindows), Latest: []OpenWindow{}, Failing: []FailingCell{}}}
	p.open.FailingCells = len(st.Failing)
	for _, f := range st.Failing[:min(len(st.Failing), latest)] {
		p.open.Failing = append(p.open.Failing, FailingCell{
			WindowStart: timeOrNull(f.WindowStart), WindowEnd: timeOrNull(f.WindowEnd), Pais: f.Key,
			Document: f.Path, Error: f.Error, Since: timeOrNull(f.Since),
		})
	}
	var prev time.Time
	for _, w := range st.OpenWindows {
		if !w.Start.Equal(prev) {
			p.open.Windows++
			prev = w.Start
		}
	}
	for i := len(st.OpenWindows) - 1; i >= 0 && len(p.open.Latest) < latest; i-- {
		w := st.OpenWindows[i]
		p.open.Latest = append(p.open.Latest, OpenWindow{
			WindowStart: w.Start.UTC(), WindowEnd: w.End.UTC(), Pais: w.Key, Panes: w.Panes, OnTime: string(w.OnTime),
		})
	}
	return p
}

func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// WindowDecl is the chosen aggregation's window as declared: the page
// draws sliding windows as a series over window end, since overlapping
// windows hold the same orders and must never be added.
type WindowDecl struct {
	Kind          string `json:"kind"` // fixed, sliding or session
	SizeSeconds   int64  `json:"size_seconds"`
	PeriodSeconds int64  `json:"period_seconds"` // = size for fixed windows, = gap for sessions
	GapSeconds    int64  `json:"gap_seconds,omitempty"`
}

type declared struct {
	key    string
	window WindowDecl
	spec   window.Spec
}

func declarationOf(name string) (declared, error) {
	if err := checkAggregation(name); err != nil {
		return declared{}, err
	}
	d, err := aggregation.Lookup(name)
	if err != nil {
		return declared{}, fmt.Errorf("read declaration: %w", err)
	}
	s := d.Spec()
	w := WindowDecl{Kind: "fixed", SizeSeconds: int64(s.WindowSize / time.Second), PeriodSeconds: int64(s.PeriodOrSize() / time.Second)}
	switch {
	case s.Sliding():
		w.Kind = "sliding"
	case s.Session():
		// A session's bar takes a gap's slot: a key's sessions start at
		// least a gap apart.
		w = WindowDecl{Kind: "session", SizeSeconds: int64(s.Gap / time.Second), PeriodSeconds: int64(s.Gap / time.Second), GapSeconds: int64(s.Gap / time.Second)}
	}
	return declared{key: d.Key, spec: s, window: w}, nil
}

// pickerKeys are the key picker's choices: the keys of the bars, the
// largest sum of sales first (with sliding windows each order counts the
// same number of times for every key), then the other keys the warehouse
// named and those the filter chose, alphabetically; at most MaxKeys, the
// chosen ones always among them.
func pickerKeys(bars []Bar, others, chosen []string) []string {
	sums := map[string]numeric.Dec{}
	for _, b := range bars {
		s, err := sums[b.Pais].Add(b.Importe)
		if err != nil {
			s = numeric.Max() // a sum beyond NUMERIC is the largest there is
		}
		sums[b.Pais] = s
	}
	out := slices.AppendSeq([]string{}, maps.Keys(sums)) // [], not null, in the JSON
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(sums[b].Cmp(sums[a]), cmp.Compare(a, b)) })
	rest := slices.Concat(others, chosen)
	slices.Sort(rest)
	for _, k := range slices.Compact(rest) {
		if _, ok := sums[k]; !ok {
			out = append(out, k)
		}
	}
	if len(out) <= MaxKeys {
		return out
	}
	kept := out[:MaxKeys:MaxKeys]
	for _, k := range chosen {
		if !slices.Contains(kept, k) {
			kept = append(kept, k)
		}
	}
	return kept
}
