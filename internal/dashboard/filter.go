package dashboard

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Filter narrows the chart to some keys and whole UTC days. The zero
// Filter is the default view.
type Filter struct {
	Paises []string `json:"pais,omitempty"`
	// Keys are values of the chosen aggregation's key (for ventas_hora_pais
	// they join Paises).
	Keys []string `json:"key,omitempty"`
	// From and To are UTC days, both included; zero is unbounded.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

// firstDay and lastDay bound a filter's days: the end of to's day (the next
// midnight) must be a warehouse timestamp too.
var (
	firstDay = warehouse.MinTime
	lastDay  = warehouse.MaxTime.Truncate(24*time.Hour).AddDate(0, 0, -1)
)

// MaxRangeDays bounds a date range: its windows are all read in one query,
// and a year of hours would neither fit the page nor the query budget.
const MaxRangeDays = 62

var paisCode = regexp.MustCompile(`^[A-Z]{2}$`)

// FilterError is a filter the page cannot show: Param names the query
// parameter, so the page can mark its control.
type FilterError struct {
	Param string `json:"param"`
	Msg   string `json:"error"`
}

func (e *FilterError) Error() string { return e.Msg }

func filterErr(param, format string, args ...any) error {
	return &FilterError{Param: param, Msg: param + ": " + fmt.Sprintf(format, args...)}
}

// ParseFilter reads ?pais=ES,PT&key=K&from=2026-03-01&to=2026-03-14. An
// error is a *FilterError: a 400 is better than a silently unfiltered chart.
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	var err error
	if f.Paises, err = values(q, "pais", strings.ToUpper, paisCode, "%s is not a two-letter country code such as ES"); err != nil {
		return Filter{}, err
	}
	f.Keys, err = values(q, "key", strings.TrimSpace, keyValue, "%.64q is not a key such as MOCH-40L-AZ (letters, digits, '.', '_', '-'; at most 64)")
	if err != nil {
		return Filter{}, err
	}
	if len(f.Keys) > MaxKeys {
		return Filter{}, filterErr("key", "%d keys, at most %d", len(f.Keys), MaxKeys)
	}
	day := func(name string) (time.Time, error) {
		s := strings.TrimSpace(q.Get(name))
		if s == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, filterErr(name, "%s is not a date YYYY-MM-DD", s)
		}
		if t.Before(firstDay) || t.After(lastDay) {
			return time.Time{}, filterErr(name, "%s is outside %s to %s, the days a range can hold (the warehouse's timestamps end at %s)",
				s, firstDay.Format(time.DateOnly), lastDay.Format(time.DateOnly), warehouse.MaxTime.Format(time.RFC3339Nano))
		}
		return t, nil
	}
	if f.From, err = day("from"); err != nil {
		return Filter{}, err
	}
	if f.To, err = day("to"); err != nil {
		return Filter{}, err
	}
	if !f.From.IsZero() && !f.To.IsZero() {
		if f.To.Before(f.From) {
			return Filter{}, filterErr("to", "%s is before from %s", f.To.Format(time.DateOnly), f.From.Format(time.DateOnly))
		}
		if days := int(f.To.Sub(f.From)/(24*time.Hour)) + 1; days > MaxRangeDays {
			return Filter{}, filterErr("to", "%s to %s is %d days, at most %d", f.From.Format(time.DateOnly), f.To.Format(time.DateOnly), days, MaxRangeDays)
		}
	}
	return f, nil
}

// values reads a repeatable, comma-separated parameter: each value
// normalized, checked, once, sorted.
func values(q url.Values, param string, norm func(string) string, valid *regexp.Regexp, bad string) ([]string, error) {
	var out []string
	for _, v := range q[param] {
		for p := range strings.SplitSeq(v, ",") {
			if p = norm(strings.TrimSpace(p)); p == "" {
				continue
			}
			if !valid.MatchString(p) {
				return nil, filterErr(param, bad, p)
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// MaxKeys bounds the key filter: its values travel in one query.
const MaxKeys = 50

var keyValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// keysFor returns the values the filter keeps of a view keyed by key; a
// country filter on a view not keyed by country is refused.
func (f Filter) keysFor(aggregation, key string) ([]string, error) {
	if key != "pais" {
		if len(f.Paises) > 0 {
			return nil, filterErr("pais", "aggregation %s is keyed by %s, not by country: filter it with key", aggregation, key)
		}
		return f.Keys, nil
	}
	out := slices.Clone(f.Paises)
	for _, k := range f.Keys {
		if !paisCode.MatchString(k) {
			return nil, filterErr("key", "%s is not a two-letter country code such as ES (aggregation %s is keyed by pais)", k, aggregation)
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f Filter) narrows() bool { return f.ranged() || len(f.Paises) > 0 || len(f.Keys) > 0 }

func (f Filter) ranged() bool { return !f.From.IsZero() || !f.To.IsZero() }

func (f Filter) until() time.Time { return f.To.AddDate(0, 0, 1) }

// Range is the event-time range the bars were read from: windows starting
// in [From, Until). The page says it, so a chart of the last day is never
// mistaken for all the data there is.
type Range struct {
	From  time.Time  `json:"from"`
	Until *time.Time `json:"until"` // null: open on the right
	// LastHours is set for the default view (no ?from, no ?to).
	LastHours int `json:"last_hours,omitempty"`
	// Newest says the default view ends at the end of the newest window
	// holding data, whatever processing time says (a story of March replayed
	// in December still shows March).
	Newest bool `json:"newest,omitempty"`
}

// rangeOf is the range a filter reads at processing time now, newest being
// the end of the newest window holding data (zero when unknown). Every
// range has a lower bound on window_start, the panes' partitioning column:
// with to alone, the MaxRangeDays that end with it.
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

// newestEnd is the end of the window holding M, the latest event time the
// stream accepted: no pane is of a later window. It costs no query, where
// MAX(window_start) would need a bound on the partitioning column that the
// data's age cannot give, billed at every refresh. The watermark cannot
// serve: an idle source moves it to processing time, far past the data.
func newestEnd(st streamPart, d declared) time.Time {
	if st.maxEventTime.IsZero() {
		return time.Time{}
	}
	return d.spec.WindowOf(st.maxEventTime).End
}

func (r Range) until() time.Time {
	if r.Until == nil {
		return time.Time{}
	}
	return *r.Until
}
