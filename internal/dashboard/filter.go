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

// Filter narrows the chart to some countries and an event-time range of
// whole UTC days. The zero Filter is the default view: every country, the
// newest Source.Windows windows.
type Filter struct {
	Paises []string `json:"pais,omitempty"`
	// Keys are values of the chosen aggregation's key (?key=, SKUs for one
	// keyed by sku; for ventas_hora_pais they join Paises).
	Keys []string `json:"key,omitempty"`
	// From and To are UTC days, both included: windows starting in
	// [From 00:00, To+1 00:00). Zero means unbounded on that side.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

// firstDay and lastDay bound the days of a filter: a range's bounds are
// warehouse timestamps, and the end of to's day (the next midnight) must
// be one too. A day outside them used to be read as an empty chart.
var (
	firstDay = warehouse.MinTime
	lastDay  = warehouse.MaxTime.Truncate(24*time.Hour).AddDate(0, 0, -1)
)

// MaxRangeDays bounds a date range: its windows are all read in one query,
// and a year of hours would neither fit the page nor the query budget.
const MaxRangeDays = 62

// paisCode is what a country filter may hold: the view's keys are ISO
// 3166-1 alpha-2 codes.
var paisCode = regexp.MustCompile(`^[A-Z]{2}$`)

// FilterError is a filter the page cannot show: Param names the query
// parameter, so the page can mark its control, and the message says what
// it holds and what it wants ("from: 2026-14-03 is not a date YYYY-MM-DD").
type FilterError struct {
	Param string `json:"param"`
	Msg   string `json:"error"`
}

func (e *FilterError) Error() string { return e.Msg }

func filterErr(param, format string, args ...any) error {
	return &FilterError{Param: param, Msg: param + ": " + fmt.Sprintf(format, args...)}
}

// ParseFilter reads ?pais=ES,PT&from=2026-03-01&to=2026-03-14 (pais may
// also repeat). An error is a *FilterError: the page shows it, and a 400 is
// better than a silently unfiltered chart.
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
// normalized by norm, checked by valid (bad says why not), once, sorted.
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

// keyValue is what a key filter's value may be: a SKU, a customer id or a
// country code.
var keyValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// keysFor returns the values the filter keeps of a view keyed by key: for
// pais the countries and the keys (each a country code), for another key
// the keys; a country filter on a view not keyed by country is refused.
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

// narrows reports whether the filter differs from the default view.
func (f Filter) narrows() bool { return f.ranged() || len(f.Paises) > 0 || len(f.Keys) > 0 }

// ranged reports whether the filter bounds event time.
func (f Filter) ranged() bool { return !f.From.IsZero() || !f.To.IsZero() }

// until is the exclusive end of the range: the day after To.
func (f Filter) until() time.Time { return f.To.AddDate(0, 0, 1) }
