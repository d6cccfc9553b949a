package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/render"
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

var errNotConfigured = errors.New("not configured in this process")

// TakeFiltered reads the sources at once (a BigQuery query takes about a
// second) and assembles a Snapshot: two warehouse queries whatever the
// data, each bounded on its partitioning column, so a page left open costs
// a fixed amount per refresh, not one that grows with the days kept. A
// failing source fills Errors: the page shows what it can. f is
// ParseFilter's: its values are not checked again.
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
		discards, all, err := readSummary(ctx, src, since, rng)
		if err != nil {
			fail("discards", err)
			return
		}
		snap.Discards, snap.Countries = discards, all
		if decl.key == "pais" {
			countries = all
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
	s := d.Spec
	w := WindowDecl{Kind: "fixed", SizeSeconds: int64(s.WindowSize / time.Second), PeriodSeconds: int64(s.PeriodOrSize() / time.Second)}
	switch {
	case s.Sliding():
		w.Kind = "sliding"
	case s.Session():
		// A session's bar takes a gap's slot: a key's sessions start at
		// least a gap apart.
		w = WindowDecl{Kind: "session", SizeSeconds: int64(s.Gap / time.Second), PeriodSeconds: int64(s.Gap / time.Second), GapSeconds: int64(s.Gap / time.Second)}
	}
	return declared{key: d.KeyField, spec: s, window: w}, nil
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
