package reconcile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Input is everything Compare judges, as Load reads it.
type Input struct {
	Date             string // the fecha compared, YYYY-MM-DD
	Aggregation      string
	DayStart, DayEnd time.Time // the windows starting in [DayStart, DayEnd) are the day's
	// WindowSize places an invalid message's event time in a window of the
	// hour listing; 0 means the default aggregation's size.
	WindowSize time.Duration
	Batch      []warehouse.CountryTotal // lineas_pedido of Date, per country
	Hours      []warehouse.HourlySale   // ventas_hora_pais rows of the day: windows' current values
	Drops      []Drop                   // pedidos_descartados rows for the day or its orders
}

// Drop is a discarded order, with the batch figures of its lines on Date
// when its pedido_id has any (Matched).
type Drop struct {
	PedidoID    string    `json:"pedido_id"`
	Reason      string    `json:"reason"` // stream.ReasonTooLate or "invalid: ..."
	EventTime   time.Time `json:"event_time,omitzero"`
	WindowStart time.Time `json:"window_start,omitzero"` // too-late drops only
	ReceivedAt  time.Time `json:"received_at,omitzero"`
	Matched     bool      `json:"matched"`
	// Pais and Batch: the country and figures of the order's lines on
	// Date, i.e. what this drop explains. Zero when not Matched.
	Pais  string          `json:"pais,omitempty"`
	Batch window.Measures `json:"batch"`
}

func (d Drop) TooLate() bool { return d.Reason == stream.ReasonTooLate }

type Status string

const (
	Match       Status = "match"       // both sides agree
	Explained   Status = "explained"   // they differ by exactly the dropped orders
	Unexplained Status = "unexplained" // something else differs
)

// Country is the comparison of one country's day. Difference is Batch -
// RealTime; Residual is Difference - TooLate - Invalid.
type Country struct {
	Pais       string          `json:"pais"`
	Batch      window.Measures `json:"batch"`
	RealTime   window.Measures `json:"real_time"`
	Difference window.Measures `json:"difference"`
	TooLate    window.Measures `json:"too_late"`
	Invalid    window.Measures `json:"invalid"`
	Residual   window.Measures `json:"residual"`
	Status     Status          `json:"status"`
	// OpenWindows counts the country's windows whose latest pane is EARLY.
	OpenWindows int `json:"open_windows"`
}

// HourLine is one (window, country) of the day: the real-time value, if
// any, and the drops placed in that window (a too-late drop by its window,
// an invalid message by its event time). Pais is "" for drops whose
// country is unknown (no lines on Date).
type HourLine struct {
	WindowStart time.Time       `json:"window_start"`
	Pais        string          `json:"pais"`
	HasPane     bool            `json:"has_pane"`
	RealTime    window.Measures `json:"real_time"`
	Timing      window.Timing   `json:"timing,omitempty"`
	PaneIndex   int64           `json:"pane_index"`
	TooLate     int             `json:"too_late"`
	Invalid     int             `json:"invalid"`
}

type Report struct {
	Date        string     `json:"date"`
	Aggregation string     `json:"aggregation"`
	DayStart    time.Time  `json:"day_start"`
	DayEnd      time.Time  `json:"day_end"`
	Countries   []Country  `json:"countries"`
	Hours       []HourLine `json:"hours"`
	// Explanations are the drops that explain figures: one per (pedido_id,
	// pais) with lines on Date.
	Explanations []Drop `json:"explanations"`
	// UnmatchedTooLate and UnmatchedInvalid count the drops of the day's
	// windows whose pedido_id has no lines on Date: they explain nothing.
	UnmatchedTooLate int `json:"unmatched_too_late"`
	UnmatchedInvalid int `json:"unmatched_invalid"`
	// Unexplained lists the countries with a non-zero residual.
	Unexplained []string `json:"unexplained"`
}

func (r Report) OK() bool { return len(r.Unexplained) == 0 }

// Compare is pure: same input, same report.
func Compare(in Input) (Report, error) {
	r := Report{
		Date: in.Date, Aggregation: in.Aggregation,
		DayStart: in.DayStart.UTC(), DayEnd: in.DayEnd.UTC(),
		Countries: []Country{}, Hours: []HourLine{}, Explanations: []Drop{}, Unexplained: []string{},
	}
	countries := map[string]*Country{}
	country := func(p string) *Country {
		if countries[p] == nil {
			countries[p] = &Country{Pais: p}
		}
		return countries[p]
	}
	hours := map[hourKey]*HourLine{}
	hour := func(start time.Time, p string) *HourLine {
		k := hourKey{start.UTC(), p}
		if hours[k] == nil {
			hours[k] = &HourLine{WindowStart: k.start, Pais: p}
		}
		return hours[k]
	}

	for _, t := range in.Batch {
		c := country(t.Pais)
		m := window.Measures{Importe: t.Importe, Pedidos: t.Pedidos, Unidades: t.Unidades}
		if err := add(&c.Batch, m, "batch", t.Pais); err != nil {
			return Report{}, err
		}
	}
	for _, h := range in.Hours {
		if !r.inDay(h.WindowStart) {
			continue // the loader asks for the day only; a test may not
		}
		c := country(h.Pais)
		m := window.Measures{Importe: h.Importe, Pedidos: h.Pedidos, Unidades: h.Unidades}
		if err := add(&c.RealTime, m, "real time", h.Pais); err != nil {
			return Report{}, err
		}
		if window.Timing(h.Timing) == window.TimingEarly {
			c.OpenWindows++
		}
		l := hour(h.WindowStart, h.Pais)
		if err := add(&l.RealTime, m, "real time", h.Pais); err != nil {
			return Report{}, err
		}
		l.HasPane, l.Timing, l.PaneIndex = true, window.Timing(h.Timing), h.PaneIndex
	}

	size := cmp.Or(in.WindowSize, window.Defaults().WindowSize)
	for _, d := range explaining(in.Drops) {
		if d.Matched {
			r.Explanations = append(r.Explanations, d)
			c := country(d.Pais)
			into := &c.Invalid
			if d.TooLate() {
				into = &c.TooLate
			}
			if err := add(into, d.Batch, "drops", d.Pais); err != nil {
				return Report{}, err
			}
		}
		start, ok := dropWindow(d, size)
		if !ok || !r.inDay(start) {
			continue
		}
		if !d.Matched {
			if d.TooLate() {
				r.UnmatchedTooLate++
			} else {
				r.UnmatchedInvalid++
			}
		}
		l := hour(start, d.Pais)
		if d.TooLate() {
			l.TooLate++
		} else {
			l.Invalid++
		}
	}

	for _, c := range countries {
		if err := c.judge(); err != nil {
			return Report{}, err
		}
		r.Countries = append(r.Countries, *c)
	}
	slices.SortFunc(r.Countries, func(a, b Country) int { return cmp.Compare(a.Pais, b.Pais) })
	for _, c := range r.Countries {
		if c.Status == Unexplained {
			r.Unexplained = append(r.Unexplained, c.Pais)
		}
	}
	for _, l := range hours {
		r.Hours = append(r.Hours, *l)
	}
	slices.SortFunc(r.Hours, func(a, b HourLine) int {
		return cmp.Or(a.WindowStart.Compare(b.WindowStart), cmp.Compare(a.Pais, b.Pais))
	})
	slices.SortFunc(r.Explanations, func(a, b Drop) int {
		return cmp.Or(cmp.Compare(a.Pais, b.Pais), cmp.Compare(a.PedidoID, b.PedidoID))
	})
	return r, nil
}

type hourKey struct {
	start time.Time
	pais  string
}

func (r Report) inDay(t time.Time) bool {
	return !t.Before(r.DayStart) && t.Before(r.DayEnd)
}

func (c *Country) judge() error {
	var err error
	if c.Difference, err = c.Batch.Sub(c.RealTime); err != nil {
		return fmt.Errorf("country %s: difference: %w", c.Pais, err)
	}
	rest := c.Difference
	for _, e := range []window.Measures{c.TooLate, c.Invalid} {
		if rest, err = rest.Sub(e); err != nil {
			return fmt.Errorf("country %s: residual: %w", c.Pais, err)
		}
	}
	c.Residual = rest
	switch {
	case !c.Residual.IsZero():
		c.Status = Unexplained
	case !c.Difference.IsZero():
		c.Status = Explained
	default:
		c.Status = Match
	}
	return nil
}

// explaining keeps one drop per (pedido_id, pais): a message can be
// dead-lettered several times (each redelivery of a different message ID
// is a new row), but its order is missing from the stream once. A too-late
// record wins over invalid ones, then the earliest. Drops without a
// pedido_id are kept as they are: they can match nothing.
func explaining(drops []Drop) []Drop {
	type key struct{ id, pais string }
	best := map[key]int{}
	var out []Drop
	for _, d := range drops {
		if d.PedidoID == "" {
			out = append(out, d)
			continue
		}
		k := key{d.PedidoID, d.Pais}
		i, seen := best[k]
		if !seen {
			best[k] = len(out)
			out = append(out, d)
			continue
		}
		if preferred(d, out[i]) {
			out[i] = d
		}
	}
	return out
}

func preferred(a, b Drop) bool {
	if a.TooLate() != b.TooLate() {
		return a.TooLate()
	}
	return a.ReceivedAt.Before(b.ReceivedAt) || (a.ReceivedAt.Equal(b.ReceivedAt) && strings.Compare(a.Reason, b.Reason) < 0)
}

// dropWindow places a too-late drop in the window it was dropped from, an
// invalid message in the window of its event time when that parsed.
func dropWindow(d Drop, size time.Duration) (time.Time, bool) {
	switch {
	case d.TooLate() && !d.WindowStart.IsZero():
		return d.WindowStart.UTC(), true
	case !d.EventTime.IsZero():
		return window.Spec{WindowSize: size}.WindowOf(d.EventTime).Start, true
	}
	return time.Time{}, false
}

func add(into *window.Measures, m window.Measures, side, pais string) error {
	s, err := into.Add(m)
	if err != nil {
		return fmt.Errorf("country %s: %s total: %w", pais, side, err)
	}
	*into = s
	return nil
}
