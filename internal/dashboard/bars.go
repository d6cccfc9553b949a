package dashboard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// aggregationName is what an aggregation name may be (it also names tables
// and documents). The Querier takes no parameters, so the name is checked
// before it is spliced into SQL as a literal.
var aggregationName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

// barsSQL selects the newest windows of the dashboard view that pass the
// filter. It is plain SQL that both BigQuery and DuckDB accept: no interval
// arithmetic, whose spelling differs, so "the last n windows" is a LIMIT
// over the distinct window starts rather than a time range, which also
// keeps a quiet night from emptying the chart. A date range reads all of
// its windows (at most MaxRangeDays of hours).
func barsSQL(aggregation string, windows int, f Filter) (string, error) {
	if !aggregationName.MatchString(aggregation) {
		return "", fmt.Errorf("aggregation name %q: want letters, digits and '_'", aggregation)
	}
	for _, p := range f.Paises {
		if !paisCode.MatchString(p) {
			return "", fmt.Errorf("pais %q: want a two-letter country code such as ES", p)
		}
	}
	if f.ranged() {
		windows = max(windows, MaxRangeDays*24)
	}
	lit := "'" + aggregation + "'"
	return "SELECT v.window_start, v.window_end, v.pais, v.importe, v.pedidos, v.unidades, v.timing, v.pane_index\n" +
		"FROM " + warehouse.VentasHoraPais + " AS v\n" +
		"JOIN (\n" +
		"  SELECT DISTINCT window_start FROM " + warehouse.VentasHoraPais + "\n" +
		"  WHERE aggregation = " + lit + f.where("") + "\n" +
		"  ORDER BY window_start DESC LIMIT " + strconv.Itoa(windows) + "\n" +
		") AS w ON v.window_start = w.window_start\n" +
		"WHERE v.aggregation = " + lit + f.where("v.") + "\n" +
		"ORDER BY v.window_start, v.pais", nil
}

func readBars(ctx context.Context, src Source, f Filter) ([]Bar, error) {
	if src.Warehouse == nil {
		return nil, errNotConfigured
	}
	q, err := barsSQL(src.Aggregation, src.Windows, f)
	if err != nil {
		return nil, err
	}
	res, err := src.Warehouse.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", warehouse.VentasHoraPais, err)
	}
	return parseBars(res)
}

// barColumns are the columns barsSQL selects, found by name so that an
// adapter's column order does not matter.
var barColumns = []string{"window_start", "window_end", "pais", "importe", "pedidos", "unidades", "timing", "pane_index"}

// parseBars turns the query's text cells back into typed bars. Importe
// goes through numeric.Parse, never a float, so the page shows the exact
// figure the warehouse holds.
func parseBars(res warehouse.Result) ([]Bar, error) {
	col := make(map[string]int, len(res.Columns))
	for i, c := range res.Columns {
		col[c] = i
	}
	for _, c := range barColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: answer has no column %q (columns %v)", warehouse.VentasHoraPais, c, res.Columns)
		}
	}
	bars := make([]Bar, 0, len(res.Rows))
	for n, row := range res.Rows {
		if len(row) != len(res.Columns) {
			return nil, fmt.Errorf("%s row %d: %d cells for %d columns", warehouse.VentasHoraPais, n+1, len(row), len(res.Columns))
		}
		cell := func(name string) string { return row[col[name]] }
		var (
			b    Bar
			errs []error
		)
		b.WindowStart, errs = parseTime(cell("window_start"), "window_start", errs)
		b.WindowEnd, errs = parseTime(cell("window_end"), "window_end", errs)
		b.Pedidos, errs = parseInt(cell("pedidos"), "pedidos", errs)
		b.Unidades, errs = parseInt(cell("unidades"), "unidades", errs)
		b.PaneIndex, errs = parseInt(cell("pane_index"), "pane_index", errs)
		b.Pais, b.Timing = cell("pais"), cell("timing")
		imp, err := numeric.Parse(cell("importe"), false)
		if err != nil {
			errs = append(errs, fmt.Errorf("importe %q: %w", cell("importe"), err))
		}
		b.Importe = imp
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s row %d: %w", warehouse.VentasHoraPais, n+1, joinErrs(errs))
		}
		bars = append(bars, b)
	}
	return bars, nil
}

func parseTime(s, name string, errs []error) (time.Time, []error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, append(errs, fmt.Errorf("%s %q: not an RFC 3339 time", name, s))
	}
	return t.UTC(), errs
}

func parseInt(s, name string, errs []error) (int64, []error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, append(errs, fmt.Errorf("%s %q: not an integer", name, s))
	}
	return n, errs
}

// joinErrs joins a row's errors on one line, so the page shows them all.
func joinErrs(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
