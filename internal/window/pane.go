package window

import (
	"fmt"
	"net/url"
	"time"
)

// Timing is a pane's timing, as written to the panes table.
type Timing string

const (
	TimingEarly  Timing = "EARLY"   // W < end: a speculative result
	TimingOnTime Timing = "ON_TIME" // the one pane when W reaches end
	TimingLate   Timing = "LATE"    // a correction after the ON_TIME pane, or for a window whose orders were all late
	TimingMerged Timing = "MERGED"  // the last pane of a session identity whose start moved
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

// ID is the pane's stable identity, fit for a document and an insert ID.
func (p Pane) ID() string {
	return PaneID(p.Aggregation, p.WindowStart, p.Key, p.Index)
}

// PaneID formats "<aggregation>|<window start, RFC 3339 UTC>|<key>|<index>"
// with the key path-escaped, so that no '|' nor '/' makes it ambiguous.
func PaneID(aggregation string, windowStart time.Time, key string, index int64) string {
	return fmt.Sprintf("%s|%s|%s|%d",
		aggregation, windowStart.UTC().Format(time.RFC3339Nano), url.PathEscape(key), index)
}

// OnTimeStatus records whether a (window, key) still owes its ON_TIME pane.
type OnTimeStatus string

const (
	OnTimePending OnTimeStatus = "PENDING" // owed, or W not seen at the end yet; "" reads as pending
	OnTimeDone    OnTimeStatus = "DONE"
	OnTimeNever   OnTimeStatus = "NEVER" // no order when W reached the end: all panes LATE, as in Beam
)

// PaneState is the pane bookkeeping of one (window, key). Zero value: no pane yet.
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
