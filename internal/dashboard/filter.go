package dashboard

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Filter narrows the chart to some countries and an event-time range of
// whole UTC days. The zero Filter is the default view: every country, the
// newest Source.Windows windows.
type Filter struct {
	Paises []string `json:"pais,omitempty"`
	// From and To are UTC days, both included: windows starting in
	// [From 00:00, To+1 00:00). Zero means unbounded on that side.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

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
	for _, v := range q["pais"] {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.ToUpper(strings.TrimSpace(p))
			if p == "" {
				continue
			}
			if !paisCode.MatchString(p) {
				return Filter{}, filterErr("pais", "%s is not a two-letter country code such as ES", p)
			}
			if !slices.Contains(f.Paises, p) {
				f.Paises = append(f.Paises, p)
			}
		}
	}
	slices.Sort(f.Paises)
	day := func(name string) (time.Time, error) {
		s := strings.TrimSpace(q.Get(name))
		if s == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, filterErr(name, "%s is not a date YYYY-MM-DD", s)
		}
		return t, nil
	}
	var err error
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

// ranged reports whether the filter bounds event time.
func (f Filter) ranged() bool { return !f.From.IsZero() || !f.To.IsZero() }

// until is the exclusive end of the range: the day after To.
func (f Filter) until() time.Time { return f.To.AddDate(0, 0, 1) }
