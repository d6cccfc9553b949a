package reconcile

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// The SQL here is written once in the subset that DuckDB and BigQuery both
// accept (DATE and TIMESTAMP literals, which both read as UTC; IN lists;
// LEFT JOIN), because warehouse.Querier does not say which engine answers.
// Identifiers and literals are built only from validated values: a date
// formatted by Go, an aggregation name matching nameRE.

// CurrentLinesSQL selects the order lines of lineas_pedido that count for
// date day (days since 1970-01-01): of each source object, only the rows
// of its newest loaded generation holding rows of that date, the rule by
// which ventas_diarias_sku is rebuilt (warehouse.Aggregate), so that a
// corrected re-export never counts twice. Use it as a subquery.
func CurrentLinesSQL(day int32) string {
	d := dateLiteral(day)
	t := warehouse.LineasPedido
	return "SELECT l.* FROM " + t + " AS l\n" +
		"JOIN (\n" +
		"  SELECT fecha, source_object, MAX(source_generation) AS source_generation\n" +
		"  FROM " + t + " WHERE fecha = " + d + "\n" +
		"  GROUP BY fecha, source_object\n" +
		") AS newest\n" +
		"ON l.fecha = newest.fecha AND l.source_object = newest.source_object AND l.source_generation = newest.source_generation\n" +
		"WHERE l.fecha = " + d
}

func dateLiteral(day int32) string { return "DATE '" + warehouse.FormatDate(day) + "'" }

// TimestampLiteral writes t as a TIMESTAMP literal both engines read as
// UTC.
func TimestampLiteral(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "'"
}

// nameRE is window.Spec's rule for aggregation names.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

func checkName(agg string) error {
	if !nameRE.MatchString(agg) {
		return fmt.Errorf("aggregation %q: want 1-63 characters of a-z, 0-9 and _, starting with a letter", agg)
	}
	return nil
}

func batchSQL(day int32) string {
	return "SELECT l.pais AS pais, SUM(l.importe) AS importe, COUNT(DISTINCT l.pedido_id) AS pedidos, SUM(l.cantidad) AS unidades\n" +
		"FROM (\n" + indent(CurrentLinesSQL(day)) + "\n) AS l\n" +
		"GROUP BY l.pais\nORDER BY pais"
}

func hoursSQL(agg string, from, to time.Time) string {
	return "SELECT window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index\n" +
		"FROM " + warehouse.VentasHoraPais + "\n" +
		"WHERE aggregation = '" + agg + "' AND window_start >= " + TimestampLiteral(from) + " AND window_start < " + TimestampLiteral(to) + "\n" +
		"ORDER BY window_start, pais"
}

// dropsSQL selects the discarded orders of aggregation agg (and the
// invalid messages, which belong to none) that either have lines on day
// (joined with their figures) or fall in [from, to): a too-late drop by
// its window, an invalid message by its event time, or by its arrival when
// it had none.
func dropsSQL(agg string, day int32, from, to time.Time) string {
	f, t := TimestampLiteral(from), TimestampLiteral(to)
	in := func(col string) string { return "(d." + col + " >= " + f + " AND d." + col + " < " + t + ")" }
	return "SELECT d.pedido_id AS pedido_id, d.reason AS reason, d.event_time AS event_time, d.window_start AS window_start,\n" +
		"  d.received_at AS received_at, b.pais AS pais, b.importe AS importe, b.unidades AS unidades\n" +
		"FROM " + warehouse.PedidosDescartados + " AS d\n" +
		"LEFT JOIN (\n" +
		"  SELECT l.pedido_id AS pedido_id, l.pais AS pais, SUM(l.importe) AS importe, SUM(l.cantidad) AS unidades\n" +
		"  FROM (\n" + indent(indent(CurrentLinesSQL(day))) + "\n  ) AS l\n" +
		"  GROUP BY l.pedido_id, l.pais\n" +
		") AS b ON b.pedido_id = d.pedido_id\n" +
		"WHERE (d.aggregation = '" + agg + "' OR (d.aggregation IS NULL AND d.reason LIKE 'invalid:%'))\n" +
		"  AND (b.pedido_id IS NOT NULL OR " + in("window_start") + " OR " + in("event_time") +
		" OR (d.event_time IS NULL AND " + in("received_at") + "))\n" +
		"ORDER BY pedido_id, reason, received_at"
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
