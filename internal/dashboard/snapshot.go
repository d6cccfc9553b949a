package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/render"
)

// Snapshot is the JSON the page renders (GET /api/dashboard). Every time
// in it is UTC.
type Snapshot struct {
	Aggregation string    `json:"aggregation"`
	Now         time.Time `json:"now"`
	// Filter is the one the bars were read with; absent for the default
	// view (every country, the newest windows of the last DefaultRange).
	Filter *Filter `json:"filter,omitempty"`
	// Range is the event-time range the bars and the country choices were
	// read from, the filter's or the default's.
	Range Range `json:"range"`
	// Watermark is null until the aggregation has accepted an order.
	Watermark *Watermark `json:"watermark"`
	Freshness Freshness  `json:"freshness"`
	Bars      []Bar      `json:"bars"`
	// Countries are every country the view ventas_hora_pais holds in the
	// range, whatever the aggregation chosen.
	Countries []string `json:"countries"`
	// Key is the chosen aggregation's key (pais, sku, cliente_id) and
	// Window its window, as declared: the page's labels, cards and
	// filter say them, and sliding windows are drawn as such.
	Key    string     `json:"key"`
	Window WindowDecl `json:"window"`
	// Keys are the key picker's choices: the keys of the range shown, the
	// largest sales first (see pickerKeys).
	Keys     []string `json:"keys"`
	Discards Discards `json:"discards"`
	// OpenWindows is null when the stream's state cannot be read here.
	OpenWindows *OpenWindows `json:"open_windows"`
	Files       []File       `json:"files"`
	// Monitor is the monitoring panel, over processing time; null where
	// the process keeps no Monitor (Source.Monitor).
	Monitor *Monitoring `json:"monitor"`
	// Errors says, per part of the page ("bars", "watermark", "files",
	// "discards", "stream"), why it could not be read; the other parts are
	// still filled in.
	Errors map[string]string `json:"errors,omitempty"`
}

// Freshness says how recent the newest inputs are, so that a quiet page is
// told apart from a stalled pipeline.
type Freshness struct {
	// LastOrderAccepted is the processing time of the last order the
	// stream accepted, as its last tick saw it; null before any.
	LastOrderAccepted *time.Time `json:"last_order_accepted"`
	// LastFileLoaded is the newest file the ledger finished as DONE; null
	// before any.
	LastFileLoaded *LoadedFile `json:"last_file_loaded"`
}

// LoadedFile is a file's name and when its load finished.
type LoadedFile struct {
	Bucket     string    `json:"bucket"`
	Name       string    `json:"name"`
	Generation int64     `json:"generation"`
	FinishedAt time.Time `json:"finished_at"`
}

// Watermark is an aggregation's watermark and how far it trails processing
// time.
type Watermark struct {
	At         time.Time `json:"at"`
	LagSeconds int64     `json:"lag_seconds"` // durations in JSON are seconds, nothing else
}

// Bar is one (hourly window, country) of the dashboard view: its current
// value and the timing of the pane that set it.
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

// MarshalJSON writes Importe as every JSON answer writes money: an exact
// decimal string with its scale, "65.40" (numeric.Dec alone writes the
// shortest form, "65.4").
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
	Object string `json:"object"` // gs://bucket/object#generation
	// Bucket, Name and Generation are Object's parts: the page shows the
	// name and keeps the generation (16 digits) for a tooltip.
	Bucket      string           `json:"bucket"`
	Name        string           `json:"name"`
	Generation  int64            `json:"generation"`
	State       ledger.State     `json:"state"`
	Feed        string           `json:"feed,omitempty"`
	Read        int64            `json:"read"`
	Loaded      int64            `json:"loaded"`
	Quarantined int64            `json:"quarantined"`
	Rejects     map[string]int64 `json:"rejects,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	StartedAt   time.Time        `json:"started_at,omitzero"`
	FinishedAt  time.Time        `json:"finished_at,omitzero"`
	// Quarantine is the quarantine object's name when rows were set aside,
	// and QuarantineURL its download (absent without Source.QuarantineBucket).
	Quarantine    string `json:"quarantine,omitempty"`
	QuarantineURL string `json:"quarantine_url,omitempty"`
}

// Parts of the page, as keys of Snapshot.Errors.
const (
	PartBars      = "bars"
	PartWatermark = "watermark"
	PartFiles     = "files"
	PartDiscards  = "discards"
	PartStream    = "stream"
	PartBacklog   = "backlog"
)

var errNotConfigured = errors.New("not configured in this process")

// TakeFiltered reads the sources at once (a BigQuery query takes about a
// second; the page should not wait for the sum) and assembles a Snapshot.
// It runs two warehouse queries (the bars, and one summary of discards and
// countries), whatever the data, each bounded on the partitioning columns
// (the filter's range or the DefaultRange of window_start up to the newest
// data, the last DefaultRange of received_at): a page left open costs a fixed amount per
// refresh, not one that grows with the days kept. A failing source fills
// Errors, never the returned error: the page shows what it can.
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
		fail(PartBars, err)
	}
	snap.Key, snap.Window = decl.key, decl.window
	// The stream's status first: its newest event time ends the default
	// range (newestEnd), which the two warehouse reads are bounded by.
	st, err := readStream(ctx, src, now)
	if err != nil {
		fail(PartStream, err)
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
			fail(PartBars, err)
			return
		}
		snap.Bars = bars
	})
	wg.Go(func() {
		sum, err := readSummary(ctx, src, since, rng)
		if err != nil {
			fail(PartDiscards, err)
			return
		}
		snap.Discards, snap.Countries = sum.discards, sum.countries
		if decl.key == "pais" {
			countries = sum.countries
		}
	})
	wg.Go(func() {
		if src.Watermarks == nil {
			fail(PartWatermark, errNotConfigured)
			return
		}
		w, err := src.Watermarks.Watermark(ctx, src.Aggregation)
		if err != nil {
			fail(PartWatermark, fmt.Errorf("read watermark of %s: %w", src.Aggregation, err))
			return
		}
		snap.Watermark = watermarkAt(w, now)
	})
	wg.Go(func() {
		if src.Ledger == nil {
			fail(PartFiles, errNotConfigured)
			return
		}
		recs, err := src.Ledger.List(ctx)
		if err != nil {
			fail(PartFiles, err)
			return
		}
		snap.Files = lastFiles(recs, src)
		snap.Freshness.LastFileLoaded = lastLoaded(recs)
	})
	if src.Monitor != nil {
		from, until := monitorRange(f, now)
		m := src.Monitor.Read(src.Aggregation, from, until)
		if src.Backlog != nil {
			if b, err := src.Backlog.Backlog(ctx); err != nil {
				fail(PartBacklog, fmt.Errorf("read the backlog: %w", err))
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

// monitorRange is the processing time the monitoring panel covers: the
// filter's days when it names some (up to now at the latest), else the
// DefaultRange up to now. The sales charts follow event time, which may be
// months older (a story replayed today); the panel says what happened
// when.
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

// watermarkAt returns nil for the zero watermark (W at minus infinity has
// no lag worth showing).
func watermarkAt(w, now time.Time) *Watermark {
	if w.IsZero() {
		return nil
	}
	lag := now.Sub(w).Truncate(time.Second)
	return &Watermark{At: w.UTC(), LagSeconds: int64(lag / time.Second)}
}

// lastFiles keeps the src.Files newest records; List already orders them
// newest first.
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

// downloadURL is the Cloud Storage JSON API media download of an object,
// the path the local server's fake GCS also answers.
func downloadURL(base, bucket, object string) string {
	return base + "download/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(object) + "?alt=media"
}
