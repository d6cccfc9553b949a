package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Discards are the orders the stream did not count: invalid messages (dead
// letters) and orders that came after their window's allowed lateness
// (too-late drops, of this aggregation), with the newest of each.
type Discards struct {
	DeadLetters       int64     `json:"dead_letters"`
	TooLate           int64     `json:"too_late"`
	LatestDeadLetters []Discard `json:"latest_dead_letters"`
	LatestTooLate     []Discard `json:"latest_too_late"`
}

// Discard is one row of pedidos_descartados as the page lists it (the raw
// message stays in the warehouse: it may be a megabyte).
type Discard struct {
	PedidoID    string    `json:"pedido_id,omitempty"`
	Reason      string    `json:"reason"`
	EventTime   time.Time `json:"event_time,omitzero"`
	WindowStart time.Time `json:"window_start,omitzero"`
	ReceivedAt  time.Time `json:"received_at"`
}

// Kinds of discard, as the summary query labels them.
const (
	kindDeadLetter = "dead_letter"
	kindTooLate    = "too_late"
)

// summarySQL is the page's second and last query: in one statement (one
// BigQuery job per refresh, not four), the discard counts, the newest
// discards of each kind, and the countries the view holds (the country
// filter's choices, which a filtered chart cannot tell). Every SELECT of
// the UNION has the same eight columns: kind, what, n, pedido_id, reason,
// event_time, window_start, received_at. The QUALIFY sits in a subquery
// (next to its WHERE, as BigQuery wants) so no dialect has to decide
// which member of the UNION it belongs to.
func summarySQL(aggregation string, latest int) (string, error) {
	if !aggregationName.MatchString(aggregation) {
		return "", fmt.Errorf("aggregation name %q: want letters, digits and '_'", aggregation)
	}
	lit := "'" + aggregation + "'"
	kind := "CASE WHEN reason = '" + stream.ReasonTooLate + "' THEN '" + kindTooLate + "' ELSE '" + kindDeadLetter + "' END"
	// Another aggregation's too-late drops are not this chart's.
	mine := "WHERE (reason <> '" + stream.ReasonTooLate + "' OR aggregation = " + lit + ")"
	return "SELECT 'count' AS kind, " + kind + " AS what, COUNT(*) AS n,\n" +
		"  CAST(NULL AS STRING) AS pedido_id, CAST(NULL AS STRING) AS reason, CAST(NULL AS TIMESTAMP) AS event_time,\n" +
		"  CAST(NULL AS TIMESTAMP) AS window_start, MAX(received_at) AS received_at\n" +
		"FROM " + warehouse.PedidosDescartados + "\n" + mine + "\n" +
		"GROUP BY what\n" +
		"UNION ALL\n" +
		"SELECT * FROM (\n" +
		"  SELECT 'row' AS kind, " + kind + " AS what, 0 AS n, pedido_id, reason, event_time, window_start, received_at\n" +
		"  FROM " + warehouse.PedidosDescartados + "\n  " + mine + "\n" +
		"  QUALIFY ROW_NUMBER() OVER (PARTITION BY " + kind + " ORDER BY received_at DESC) <= " + strconv.Itoa(latest) + "\n" +
		") AS latest\n" +
		"UNION ALL\n" +
		"SELECT 'country' AS kind, pais AS what, COUNT(*) AS n,\n" +
		"  CAST(NULL AS STRING) AS pedido_id, CAST(NULL AS STRING) AS reason, CAST(NULL AS TIMESTAMP) AS event_time,\n" +
		"  CAST(NULL AS TIMESTAMP) AS window_start, CAST(NULL AS TIMESTAMP) AS received_at\n" +
		"FROM " + warehouse.VentasHoraPais + "\n" +
		"WHERE aggregation = " + lit + "\n" +
		"GROUP BY pais", nil
}

var summaryColumns = []string{"kind", "what", "n", "pedido_id", "reason", "event_time", "window_start", "received_at"}

// summary is what summarySQL answers.
type summary struct {
	discards  Discards
	countries []string
}

func readSummary(ctx context.Context, src Source) (summary, error) {
	if src.Warehouse == nil {
		return summary{}, errNotConfigured
	}
	q, err := summarySQL(src.Aggregation, src.Latest)
	if err != nil {
		return summary{}, err
	}
	res, err := src.Warehouse.Query(ctx, q)
	if err != nil {
		return summary{}, fmt.Errorf("query %s: %w", warehouse.PedidosDescartados, err)
	}
	return parseSummary(res)
}

func parseSummary(res warehouse.Result) (summary, error) {
	col := make(map[string]int, len(res.Columns))
	for i, c := range res.Columns {
		col[c] = i
	}
	for _, c := range summaryColumns {
		if _, ok := col[c]; !ok {
			return summary{}, fmt.Errorf("%s: answer has no column %q (columns %v)", warehouse.PedidosDescartados, c, res.Columns)
		}
	}
	s := summary{discards: Discards{LatestDeadLetters: []Discard{}, LatestTooLate: []Discard{}}, countries: []string{}}
	for n, row := range res.Rows {
		if len(row) != len(res.Columns) {
			return summary{}, fmt.Errorf("%s row %d: %d cells for %d columns", warehouse.PedidosDescartados, n+1, len(row), len(res.Columns))
		}
		cell := func(name string) string { return row[col[name]] }
		var errs []error
		switch cell("kind") {
		case "count":
			var c int64
			c, errs = parseInt(cell("n"), "n", errs)
			if cell("what") == kindTooLate {
				s.discards.TooLate = c
			} else {
				s.discards.DeadLetters = c
			}
		case "row":
			d := Discard{PedidoID: nullable(cell("pedido_id")), Reason: cell("reason")}
			d.ReceivedAt, errs = parseTime(cell("received_at"), "received_at", errs)
			d.EventTime, errs = parseNullTime(cell("event_time"), "event_time", errs)
			d.WindowStart, errs = parseNullTime(cell("window_start"), "window_start", errs)
			if cell("what") == kindTooLate {
				s.discards.LatestTooLate = append(s.discards.LatestTooLate, d)
			} else {
				s.discards.LatestDeadLetters = append(s.discards.LatestDeadLetters, d)
			}
		case "country":
			s.countries = append(s.countries, cell("what"))
		default:
			errs = append(errs, fmt.Errorf("kind %q: want count, row or country", cell("kind")))
		}
		if len(errs) > 0 {
			return summary{}, fmt.Errorf("%s row %d: %w", warehouse.PedidosDescartados, n+1, joinErrs(errs))
		}
	}
	newest := func(a, b Discard) int {
		return cmp.Or(b.ReceivedAt.Compare(a.ReceivedAt), cmp.Compare(a.PedidoID, b.PedidoID))
	}
	slices.SortFunc(s.discards.LatestDeadLetters, newest)
	slices.SortFunc(s.discards.LatestTooLate, newest)
	slices.Sort(s.countries)
	return s, nil
}

// nullable maps the Querier's NULL cell to "".
func nullable(s string) string {
	if s == "NULL" {
		return ""
	}
	return s
}

func parseNullTime(s, name string, errs []error) (time.Time, []error) {
	if s == "NULL" {
		return time.Time{}, errs
	}
	return parseTime(s, name, errs)
}
