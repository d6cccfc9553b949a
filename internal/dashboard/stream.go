package dashboard

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
)

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
	Failing      []FailingWindow `json:"failing"`
	FailingCells int             `json:"failing_cells"`
}

// FailingWindow is a window the tick cannot process, or a document Status
// cannot read.
type FailingWindow struct {
	WindowStart *time.Time `json:"window_start"` // null when the document names no window
	WindowEnd   *time.Time `json:"window_end"`
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
	p := streamPart{lastAccepted: st.LastAccepted.UTC(), maxEventTime: st.MaxEventTime.UTC(), open: OpenWindows{Cells: len(st.OpenWindows), Latest: []OpenWindow{}, Failing: []FailingWindow{}}}
	p.open.FailingCells = len(st.Failing)
	for _, f := range st.Failing[:min(len(st.Failing), latest)] {
		p.open.Failing = append(p.open.Failing, FailingWindow{
			WindowStart: timeOrNull(f.WindowStart), WindowEnd: timeOrNull(f.WindowEnd),
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
