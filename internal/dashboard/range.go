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
	// windows that started in the LastHours hours up to the newest data
	// (Newest), or, before any order was accepted or where the stream's
	// state cannot be read, of processing time.
	LastHours int `json:"last_hours,omitempty"`
	// Newest says that the default view ends at the newest data: Until is
	// the end of the newest window holding the latest event time the
	// stream accepted, whatever processing time says (a story of March
	// replayed in December is still what the page shows).
	Newest bool `json:"newest,omitempty"`
}

// rangeOf is the range a filter reads at processing time now, newest being
// the end of the newest window holding data (zero when unknown). Every
// range has a lower bound on window_start, the panes' partitioning column,
// so no read scans every day ever written: without from and to the
// DefaultRange up to newest, or else up to now; with to alone the MaxRangeDays days that end with it (the
// limit an explicit range has, from the first day a range can hold at the
// earliest); with from, from on, as the person chose.
func rangeOf(f Filter, now, newest time.Time) Range {
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
	if !newest.IsZero() {
		return Range{From: newest.Add(-DefaultRange), Until: &newest, LastHours: int(DefaultRange / time.Hour), Newest: true}
	}
	return Range{From: now.Add(-DefaultRange), LastHours: int(DefaultRange / time.Hour)}
}

// newestEnd is the end of the newest window that can hold a pane: the
// newest of the windows holding M, the latest event time the stream
// accepted, as the stream's status (already read for the page) says. No
// pane is of a later window, since every pane holds accepted orders. It
// costs no query: asking the warehouse for MAX(window_start) would need a
// bound on window_start (the partitioning column) that the data's age
// cannot give, and BigQuery bills every partition such a query reads, at
// every refresh (every 5 minutes over BigQuery). The watermark cannot
// serve: an idle source moves it to processing time, far past the data.
func newestEnd(st streamPart, d declared) time.Time {
	if st.maxEventTime.IsZero() {
		return time.Time{}
	}
	return d.spec.WindowOf(st.maxEventTime).End
}

// until is the exclusive end of the range, zero when open.
func (r Range) until() time.Time {
	if r.Until == nil {
		return time.Time{}
	}
	return *r.Until
}
