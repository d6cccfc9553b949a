package dashboard

import "time"

// Range is the event-time range the bars were read from: windows starting
// in [From, Until). The page says it next to the filter, so a chart of the
// last day is never mistaken for all the data there is.
type Range struct {
	From time.Time `json:"from"`
	// Until is null when the range is open on the right (up to the newest
	// window).
	Until *time.Time `json:"until"`
	// LastHours is set for the default view (no ?from, no ?to): the
	// windows that started in the last LastHours hours of processing time.
	LastHours int `json:"last_hours,omitempty"`
}

// rangeOf is the range a filter reads at processing time now. Every range
// has a lower bound on window_start, the panes' partitioning column, so no
// read scans every day ever written: without from and to the last
// DefaultRange; with to alone the MaxRangeDays days that end with it (the
// limit an explicit range has, from the first day a range can hold at the
// earliest); with from, from on, as the person chose.
func rangeOf(f Filter, now time.Time) Range {
	switch {
	case !f.From.IsZero():
		r := Range{From: f.From}
		if !f.To.IsZero() {
			until := f.until()
			r.Until = &until
		}
		return r
	case !f.To.IsZero():
		until := f.until()
		from := until.AddDate(0, 0, -MaxRangeDays)
		if from.Before(firstDay) {
			from = firstDay
		}
		return Range{From: from, Until: &until}
	}
	return Range{From: now.Add(-DefaultRange), LastHours: int(DefaultRange / time.Hour)}
}

// until is the exclusive end of the range, zero when open.
func (r Range) until() time.Time {
	if r.Until == nil {
		return time.Time{}
	}
	return *r.Until
}
