package dashboard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/numeric"
)

// Snapshot is the JSON the page renders (GET /api/dashboard).
type Snapshot struct {
	Aggregation string    `json:"aggregation"`
	Now         time.Time `json:"now"`
	// Watermark is null until the aggregation has accepted an order.
	Watermark *Watermark `json:"watermark"`
	Bars      []Bar      `json:"bars"`
	Files     []File     `json:"files"`
	// Errors says, per part of the page ("bars", "watermark", "files"),
	// why it could not be read; the other parts are still filled in.
	Errors map[string]string `json:"errors,omitempty"`
}

// Watermark is an aggregation's watermark and how far it trails processing
// time.
type Watermark struct {
	At         time.Time `json:"at"`
	LagSeconds int64     `json:"lag_seconds"`
	Lag        string    `json:"lag"` // Go duration, e.g. "22m0s"
}

// Bar is one (hourly window, country) of the dashboard view: its current
// value and the timing of the pane that set it.
type Bar struct {
	WindowStart time.Time   `json:"window_start"`
	WindowEnd   time.Time   `json:"window_end"`
	Pais        string      `json:"pais"`
	Importe     numeric.Dec `json:"importe"` // a JSON string: money stays exact up to the page
	Pedidos     int64       `json:"pedidos"`
	Unidades    int64       `json:"unidades"`
	Timing      string      `json:"timing"` // EARLY, ON_TIME or LATE
	PaneIndex   int64       `json:"pane_index"`
}

// File is one ledger record as the page lists it.
type File struct {
	Object      string           `json:"object"` // gs://bucket/object#generation
	State       ledger.State     `json:"state"`
	Feed        string           `json:"feed,omitempty"`
	Read        int64            `json:"read"`
	Loaded      int64            `json:"loaded"`
	Quarantined int64            `json:"quarantined"`
	Rejects     map[string]int64 `json:"rejects,omitempty"`
	Reason      string           `json:"reason,omitempty"`
	StartedAt   time.Time        `json:"started_at,omitzero"`
	FinishedAt  time.Time        `json:"finished_at,omitzero"`
}

// Parts of the page, as keys of Snapshot.Errors.
const (
	PartBars      = "bars"
	PartWatermark = "watermark"
	PartFiles     = "files"
)

var errNotConfigured = errors.New("not configured in this process")

// Take reads the three sources at once (a BigQuery query takes about a
// second; the page should not wait for the sum) and assembles a Snapshot.
// A failing source fills Errors, never the returned error: the page shows
// what it can.
func Take(ctx context.Context, src Source) Snapshot {
	src = src.withDefaults()
	now := src.Now().UTC()
	snap := Snapshot{Aggregation: src.Aggregation, Now: now, Bars: []Bar{}, Files: []File{}}
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
	wg.Go(func() {
		bars, err := readBars(ctx, src)
		if err != nil {
			fail(PartBars, err)
			return
		}
		snap.Bars = bars
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
		snap.Files = lastFiles(recs, src.Files)
	})
	wg.Wait()
	if len(errs) > 0 {
		snap.Errors = errs
	}
	return snap
}

// watermarkAt returns nil for the zero watermark (W at minus infinity has
// no lag worth showing).
func watermarkAt(w, now time.Time) *Watermark {
	if w.IsZero() {
		return nil
	}
	lag := now.Sub(w).Truncate(time.Second)
	return &Watermark{At: w.UTC(), LagSeconds: int64(lag / time.Second), Lag: lag.String()}
}

// lastFiles keeps the n newest records; List already orders them newest
// first.
func lastFiles(recs []ledger.Record, n int) []File {
	recs = recs[:min(n, len(recs))]
	out := make([]File, len(recs))
	for i, r := range recs {
		out[i] = File{
			Object:      r.Key.String(),
			State:       r.State,
			Feed:        r.Feed,
			Read:        r.Counts.Read,
			Loaded:      r.Counts.Loaded,
			Quarantined: r.Counts.Quarantined,
			Rejects:     r.Counts.Rejects,
			Reason:      r.Reason,
			StartedAt:   r.StartedAt,
			FinishedAt:  r.FinishedAt,
		}
	}
	return out
}
