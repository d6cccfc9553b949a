package window

import (
	"net/url"
	"strconv"
	"time"
)

// Timing is a pane's timing, as written to the panes table.
type Timing string

const (
	TimingEarly  Timing = "EARLY"   // W < end: a speculative result
	TimingOnTime Timing = "ON_TIME" // the one pane when W reaches end
	TimingLate   Timing = "LATE"    // a correction after the ON_TIME pane, or for a window whose orders were all late
	// TimingMerged is the last pane of a session identity that stopped
	// existing: a merge or an earlier order moved its session's start.
	TimingMerged Timing = "MERGED"
)

// Pane is one emitted result of a (window, key): a row of the panes table.
type Pane struct {
	Aggregation  string       `json:"aggregation"`
	Key          string       `json:"key"`
	WindowStart  time.Time    `json:"window_start"`
	WindowEnd    time.Time    `json:"window_end"`
	Index        int64        `json:"pane_index"`
	Timing       Timing       `json:"timing"`
	Accumulation Accumulation `json:"accumulation"`
	Measures     Measures     `json:"measures"` // totals so far, or the change since the previous pane when discarding
	Watermark    time.Time    `json:"watermark"`
	EmittedAt    time.Time    `json:"emitted_at"`
	// MergedInto is the session's new window_start, on MERGED panes only.
	MergedInto time.Time `json:"merged_into,omitzero"`
}

// ID is the pane's stable identity (aggregation, window_start, key,
// pane_index), fit for a document ID and a warehouse insert ID.
func (p Pane) ID() string {
	return PaneID(p.Aggregation, p.WindowStart, p.Key, p.Index)
}

// WindowKey returns the cell the pane belongs to.
func (p Pane) WindowKey() WindowKey {
	return WindowKey{Window: Window{Start: p.WindowStart, End: p.WindowEnd}, Key: p.Key}
}

// PaneID formats a pane identity as
// "<aggregation>|<window start, RFC 3339 UTC>|<escaped key>|<index>".
// The key is path-escaped, so it holds neither '|' nor '/' and the identity
// parses back unambiguously; aggregation names cannot hold either.
func PaneID(aggregation string, windowStart time.Time, key string, index int64) string {
	b := make([]byte, 0, len(aggregation)+len(key)+32)
	b = append(b, aggregation...)
	b = append(b, '|')
	b = windowStart.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '|')
	b = append(b, url.PathEscape(key)...)
	b = append(b, '|')
	b = strconv.AppendInt(b, index, 10)
	return string(b)
}

// OnTimeStatus records whether a (window, key) still owes its ON_TIME pane.
type OnTimeStatus string

const (
	// OnTimePending: the watermark has not been seen at the window end yet
	// (or the ON_TIME pane is owed). The zero value "" reads as pending.
	OnTimePending OnTimeStatus = "PENDING"
	// OnTimeDone: the ON_TIME pane was emitted.
	OnTimeDone OnTimeStatus = "DONE"
	// OnTimeNever: the window held no order when the watermark reached its
	// end (its first order was late), so its panes are all LATE, as with
	// Beam's PaneInfoTracker.
	OnTimeNever OnTimeStatus = "NEVER"
)

// PaneState is the pane bookkeeping of one (window, key), written with every
// pane it emits. Zero value: no pane emitted yet.
type PaneState struct {
	NextIndex int64        `json:"next_index"` // index of the next pane: panes so far
	Emitted   Measures     `json:"emitted"`    // totals covered by the panes so far
	OnTime    OnTimeStatus `json:"on_time,omitempty"`
}

func (st PaneState) onTime() OnTimeStatus {
	if st.OnTime == "" {
		return OnTimePending
	}
	return st.OnTime
}
