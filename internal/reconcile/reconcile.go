// Package reconcile compares, for one date, the real-time figures of the
// dashboard view (ventas_hora_pais) with the batch figures of lineas_pedido,
// and explains the differences by the orders the stream dropped
// (pedidos_descartados: too_late, or "invalid: ...").
//
// lineas_pedido has a date and no time of day, so only daily totals per
// country are judged: batch of fecha D (SUM(importe), COUNT(DISTINCT
// pedido_id), SUM(cantidad)) against the windows starting in D (UTC unless
// another zone is asked for: the ERP's fecha is a day in its zone). The
// hours are listed as detail. Batch rows follow the newest-generation rule
// (warehouse's country_totals and day_drops, shared with replay's
// day_orders), so a corrected re-export is not counted twice.
//
// A drop whose pedido_id has lines on D explains those lines' amounts, once
// per (pedido_id, pais) however many rows recorded it (too_late preferred).
// Drops are matched by pedido_id, not by what the message said, since an
// invalid message's amount or country is often what made it invalid.
// residual = batch - real time - too_late - invalid must be zero in every
// measure, or the country is unexplained and the command exits non-zero.
//
// Known limits: an order dead-lettered and later republished and accepted
// turns into a negative residual (its drop is listed); windows whose latest
// pane is EARLY count as open; an order whose lines carry two countries
// counts once in each.
package reconcile

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Request names the day to reconcile.
type Request struct {
	Date        string         // YYYY-MM-DD, the fecha of lineas_pedido
	Aggregation string         // "" means window.Defaults().Name (ventas_hora_pais)
	Location    *time.Location // the zone of the real-time day; nil means UTC
}

// Warehouse serves the named reads country_totals, windows_between and
// day_drops.
type Warehouse interface {
	Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error)
}

func Run(ctx context.Context, r Warehouse, req Request) (Report, error) {
	in, err := Load(ctx, r, req)
	if err != nil {
		return Report{}, err
	}
	return Compare(in)
}

// Load reads Compare's input: the batch totals per country, the view's
// rows of the day, and the drops.
func Load(ctx context.Context, r Warehouse, req Request) (Input, error) {
	d, err := time.Parse(time.DateOnly, req.Date)
	if err != nil {
		return Input{}, fmt.Errorf("reconcile: date %q: want YYYY-MM-DD", req.Date)
	}
	agg := cmp.Or(req.Aggregation, window.Defaults().Name)
	if !nameRE.MatchString(agg) {
		return Input{}, fmt.Errorf("reconcile: aggregation %q: want 1-63 characters of a-z, 0-9 and _, starting with a letter", agg)
	}
	loc := cmp.Or(req.Location, time.UTC)
	day := warehouse.DateOf(d)
	from := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC()
	to := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc).UTC()
	in := Input{Date: req.Date, Aggregation: agg, DayStart: from, DayEnd: to}

	batch, err := warehouse.ReadCountryTotals(ctx, r, day)
	if err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %w", req.Date, err)
	}
	in.Batch = make([]Total, 0, len(batch))
	for _, b := range batch {
		in.Batch = append(in.Batch, Total{Pais: b.Pais, Measures: window.Measures{Importe: b.Importe, Pedidos: b.Pedidos, Unidades: b.Unidades}})
	}

	hours, err := warehouse.ReadWindowsBetween(ctx, r, agg, from, to)
	if err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %w", req.Date, err)
	}
	in.Hours = make([]Hour, 0, len(hours))
	for _, h := range hours {
		in.Hours = append(in.Hours, Hour{WindowStart: h.WindowStart, WindowEnd: h.WindowEnd, Pais: h.Pais,
			Timing: window.Timing(h.Timing), PaneIndex: h.PaneIndex,
			Measures: window.Measures{Importe: h.Importe, Pedidos: h.Pedidos, Unidades: h.Unidades}})
	}
	if len(in.Hours) > 0 {
		in.WindowSize = in.Hours[0].WindowEnd.Sub(in.Hours[0].WindowStart)
	}

	drops, err := warehouse.ReadDayDrops(ctx, r, day, agg, from, to)
	if err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %w", req.Date, err)
	}
	in.Drops = make([]Drop, 0, len(drops))
	for _, d := range drops {
		drop := Drop{PedidoID: d.PedidoID, Reason: d.Reason, Pais: d.Pais, EventTime: d.EventTime,
			WindowStart: d.WindowStart, ReceivedAt: d.ReceivedAt, Matched: d.Matched}
		if d.Matched {
			drop.Batch = window.Measures{Importe: d.Importe, Pedidos: 1, Unidades: d.Unidades}
		}
		in.Drops = append(in.Drops, drop)
	}
	return in, nil
}

// nameRE is window.Spec's rule for aggregation names.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Input is everything Compare judges, as Load reads it.
type Input struct {
	Date             string // the fecha compared, YYYY-MM-DD
	Aggregation      string
	DayStart, DayEnd time.Time // the windows starting in [DayStart, DayEnd) are the day's
	// WindowSize places an invalid message's event time in a window of the
	// hour listing; 0 means the default aggregation's size.
	WindowSize time.Duration
	Batch      []Total // lineas_pedido of Date, per country
	Hours      []Hour  // ventas_hora_pais rows of the day
	Drops      []Drop  // pedidos_descartados rows for the day or its orders
}

type Total struct {
	Pais     string          `json:"pais"`
	Measures window.Measures `json:"measures"`
}

// Hour is one row of the real-time view: a window's current value.
type Hour struct {
	WindowStart time.Time       `json:"window_start"`
	WindowEnd   time.Time       `json:"window_end"`
	Pais        string          `json:"pais"`
	Measures    window.Measures `json:"measures"`
	Timing      window.Timing   `json:"timing"`
	PaneIndex   int64           `json:"pane_index"`
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
		c, ok := countries[p]
		if !ok {
			c = &Country{Pais: p}
			countries[p] = c
		}
		return c
	}
	hours := map[hourKey]*HourLine{}
	hour := func(start time.Time, p string) *HourLine {
		k := hourKey{start.UTC(), p}
		h, ok := hours[k]
		if !ok {
			h = &HourLine{WindowStart: k.start, Pais: p}
			hours[k] = h
		}
		return h
	}

	for _, t := range in.Batch {
		c := country(t.Pais)
		if err := add(&c.Batch, t.Measures, "batch", t.Pais); err != nil {
			return Report{}, err
		}
	}
	for _, h := range in.Hours {
		if !r.inDay(h.WindowStart) {
			continue // the loader asks for the day only; a test may not
		}
		c := country(h.Pais)
		if err := add(&c.RealTime, h.Measures, "real time", h.Pais); err != nil {
			return Report{}, err
		}
		if h.Timing == window.TimingEarly {
			c.OpenWindows++
		}
		l := hour(h.WindowStart, h.Pais)
		if err := add(&l.RealTime, h.Measures, "real time", h.Pais); err != nil {
			return Report{}, err
		}
		l.HasPane, l.Timing, l.PaneIndex = true, h.Timing, h.PaneIndex
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

// WriteText renders the report for a person: the per-country verdict
// first, then the hourly detail and the drops that explain figures.
func (r Report) WriteText(w io.Writer) error {
	ew := &bytes.Buffer{}
	fmt.Fprintf(ew, "reconcile %s, aggregation %s\n", r.Date, r.Aggregation)
	fmt.Fprintf(ew, "real time: windows starting in [%s, %s); batch: lineas_pedido with fecha %s\n",
		r.DayStart.Format(time.RFC3339), r.DayEnd.Format(time.RFC3339), r.Date)
	fmt.Fprintf(ew, "lineas_pedido has no time of day, so each country is judged on its daily totals; the hours are detail.\n")
	fmt.Fprintf(ew, "figures are importe/pedidos/unidades; difference = batch - real time; residual = difference - too_late - invalid\n\n")

	if len(r.Countries) == 0 {
		ew.WriteString("nothing to compare: no lines, windows or drops for this day\n")
		return write(w, ew)
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAIS\tBATCH\tREAL TIME\tDIFFERENCE\tTOO_LATE\tINVALID\tRESIDUAL\tSTATUS\tOPEN")
	for _, c := range r.Countries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", c.Pais, fig(c.Batch), fig(c.RealTime),
			fig(c.Difference), fig(c.TooLate), fig(c.Invalid), fig(c.Residual), c.Status, c.OpenWindows)
	}
	_ = tw.Flush()

	if len(r.Hours) > 0 {
		fmt.Fprintf(ew, "\nhours: the window's current value (latest pane) and the drops placed in it\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WINDOW_START\tPAIS\tREAL TIME\tTIMING\tPANE\tTOO_LATE\tINVALID")
		for _, h := range r.Hours {
			rt, timing, pane := "-", "-", "-"
			if h.HasPane {
				rt, timing, pane = fig(h.RealTime), string(h.Timing), strconv.FormatInt(h.PaneIndex, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", h.WindowStart.Format(time.RFC3339), cmp.Or(h.Pais, "-"),
				rt, timing, pane, h.TooLate, h.Invalid)
		}
		_ = tw.Flush()
	}

	if len(r.Explanations) > 0 {
		fmt.Fprintf(ew, "\ndropped orders with lines on %s (what they explain)\n", r.Date)
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PEDIDO_ID\tPAIS\tBATCH\tWINDOW/EVENT TIME\tREASON")
		for _, d := range r.Explanations {
			when := "-"
			switch {
			case !d.WindowStart.IsZero():
				when = d.WindowStart.Format(time.RFC3339)
			case !d.EventTime.IsZero():
				when = d.EventTime.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.PedidoID, d.Pais, fig(d.Batch), when, oneLine(d.Reason))
		}
		_ = tw.Flush()
	}
	if r.UnmatchedTooLate+r.UnmatchedInvalid > 0 {
		fmt.Fprintf(ew, "\n%d too-late and %d invalid drops in this day's windows have no lines on %s: they explain nothing here\n",
			r.UnmatchedTooLate, r.UnmatchedInvalid, r.Date)
	}
	if r.OK() {
		ew.WriteString("\nevery difference is explained by counted drops\n")
	} else {
		fmt.Fprintf(ew, "\nUNEXPLAINED differences in %s\n", strings.Join(r.Unexplained, ", "))
	}
	return write(w, ew)
}

func write(w io.Writer, b *bytes.Buffer) error {
	_, err := b.WriteTo(w)
	return err
}

func fig(m window.Measures) string {
	return render.Money(m.Importe) + "/" + strconv.FormatInt(m.Pedidos, 10) + "/" + strconv.FormatInt(m.Unidades, 10)
}

// oneLine keeps a recorded reason (which may quote message text) on one
// line of the table.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}
