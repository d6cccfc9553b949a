package warehouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// currentLines selects the lines of lineas_pedido that count for @day
// under the newest-generation rule (Aggregate); indent prefixes every line
// but the first.
func currentLines(indent string) string {
	t := LineasPedido
	return strings.ReplaceAll("SELECT l.* FROM "+t+" AS l\n"+
		"JOIN (\n"+
		"  SELECT fecha, source_object, MAX(source_generation) AS source_generation\n"+
		"  FROM "+t+" WHERE fecha = @day\n"+
		"  GROUP BY fecha, source_object\n"+
		") AS newest\n"+
		"ON l.fecha = newest.fecha AND l.source_object = newest.source_object AND l.source_generation = newest.source_generation\n"+
		"WHERE l.fecha = @day", "\n", "\n"+indent)
}

var lineDatesQuery = register("line_dates", LineasPedido,
	"SELECT DISTINCT fecha FROM "+LineasPedido+" WHERE fecha >= @first_day AND fecha <= @last_day ORDER BY fecha",
	ParamSpec{Name: "first_day", Type: Date},
	ParamSpec{Name: "last_day", Type: Date},
)

// The first and last DATE of both engines.
const (
	FirstDate int32 = -719162 // 0001-01-01
	LastDate  int32 = 2932896 // 9999-12-31
)

// ReadLineDates lists the dates (days since 1970-01-01) in [from, to] that
// lineas_pedido holds lines of, in order.
func ReadLineDates(ctx context.Context, r Reader, from, to int32) ([]int32, error) {
	s := lineDatesQuery.statement(one(DateValue(from)), one(DateValue(to)))
	return run(ctx, r, s, []string{"fecha"}, func(c *cells) int32 { return c.date("fecha") })
}

// DayOrder is one order of a date's current lines, summed; Pais and
// PaisMax differ when its lines disagree.
type DayOrder struct {
	PedidoID      string
	Pais, PaisMax string
	ClienteID     string // "" when NULL
	Importe       numeric.Dec
	Unidades      int64
}

var dayOrdersQuery = register("day_orders", LineasPedido,
	"SELECT l.pedido_id AS pedido_id, MIN(l.pais) AS pais, MAX(l.pais) AS pais_max, MIN(l.cliente_id) AS cliente_id,\n"+
		"  SUM(l.importe) AS importe, SUM(l.cantidad) AS unidades\n"+
		"FROM (\n  "+currentLines("  ")+"\n) AS l\n"+
		"GROUP BY l.pedido_id\n"+
		"ORDER BY pedido_id",
	ParamSpec{Name: "day", Type: Date},
)

// ReadDayOrders sums the current lines of day per order, by pedido_id.
func ReadDayOrders(ctx context.Context, r Reader, day int32) ([]DayOrder, error) {
	s := dayOrdersQuery.statement(one(DateValue(day)))
	return run(ctx, r, s, []string{"pedido_id", "pais", "pais_max", "cliente_id", "importe", "unidades"}, func(c *cells) DayOrder {
		if c.null("importe") || c.null("unidades") {
			c.errs = append(c.errs, fmt.Sprintf("order %s: NULL importe or unidades", c.str("pedido_id")))
		}
		return DayOrder{PedidoID: c.str("pedido_id"), Pais: c.str("pais"), PaisMax: c.str("pais_max"),
			ClienteID: c.str("cliente_id"), Importe: c.dec("importe"), Unidades: c.int("unidades")}
	})
}

// CountryTotal is a day's figures for one country.
type CountryTotal struct {
	Pais     string
	Importe  numeric.Dec
	Pedidos  int64 // distinct orders
	Unidades int64
}

var countryTotalsQuery = register("country_totals", LineasPedido,
	"SELECT l.pais AS pais, SUM(l.importe) AS importe, COUNT(DISTINCT l.pedido_id) AS pedidos, SUM(l.cantidad) AS unidades\n"+
		"FROM (\n  "+currentLines("  ")+"\n) AS l\n"+
		"GROUP BY l.pais\nORDER BY pais",
	ParamSpec{Name: "day", Type: Date},
)

// ReadCountryTotals sums the current lines of day per country, by country.
func ReadCountryTotals(ctx context.Context, r Reader, day int32) ([]CountryTotal, error) {
	s := countryTotalsQuery.statement(one(DateValue(day)))
	return run(ctx, r, s, []string{"pais", "importe", "pedidos", "unidades"}, func(c *cells) CountryTotal {
		return CountryTotal{Pais: c.str("pais"), Importe: c.dec("importe"), Pedidos: c.int("pedidos"), Unidades: c.int("unidades")}
	})
}

var windowsBetweenQuery = register("windows_between", VentasHoraPais,
	"SELECT window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index\n"+
		"FROM "+VentasHoraPais+"\n"+
		"WHERE aggregation = @aggregation AND window_start >= @start_time AND window_start < @end_time\n"+
		"ORDER BY window_start, pais",
	ParamSpec{Name: "aggregation", Type: String},
	ParamSpec{Name: "start_time", Type: Timestamp},
	ParamSpec{Name: "end_time", Type: Timestamp},
)

// ReadWindowsBetween returns the dashboard view's rows of aggregation for
// the windows starting in [from, until), by window start, then country.
func ReadWindowsBetween(ctx context.Context, r Reader, aggregation string, from, until time.Time) ([]HourlySale, error) {
	s := windowsBetweenQuery.statement(one(StringValue(aggregation)), one(TimeValue(from)), one(TimeValue(until)))
	return run(ctx, r, s, hourlySaleColumns, hourlySale("pais"))
}

// DayDrop is a discarded order that concerns a day: one of pedidos_descartados
// and, when the order has current lines that day (Matched), their figures.
type DayDrop struct {
	Discard
	Matched  bool
	Pais     string // of the lines; "" unless Matched
	Importe  numeric.Dec
	Unidades int64
}

var dayDropsQuery = func() *NamedQuery {
	in := func(col string) string { return "(d." + col + " >= @start_time AND d." + col + " < @end_time)" }
	return register("day_drops", PedidosDescartados,
		"SELECT d.pedido_id AS pedido_id, d.reason AS reason, d.event_time AS event_time, d.window_start AS window_start,\n"+
			"  d.received_at AS received_at, b.pais AS pais, b.importe AS importe, b.unidades AS unidades\n"+
			"FROM "+PedidosDescartados+" AS d\n"+
			"LEFT JOIN (\n"+
			"  SELECT l.pedido_id AS pedido_id, l.pais AS pais, SUM(l.importe) AS importe, SUM(l.cantidad) AS unidades\n"+
			"  FROM (\n    "+currentLines("    ")+"\n  ) AS l\n"+
			"  GROUP BY l.pedido_id, l.pais\n"+
			") AS b ON b.pedido_id = d.pedido_id\n"+
			"WHERE (d.aggregation = @aggregation OR (d.aggregation IS NULL AND d.reason LIKE 'invalid:%'))\n"+
			"  AND (b.pedido_id IS NOT NULL OR "+in("window_start")+" OR "+in("event_time")+
			" OR (d.event_time IS NULL AND "+in("received_at")+"))\n"+
			"ORDER BY pedido_id NULLS FIRST, reason, received_at",
		ParamSpec{Name: "day", Type: Date},
		ParamSpec{Name: "aggregation", Type: String},
		ParamSpec{Name: "start_time", Type: Timestamp},
		ParamSpec{Name: "end_time", Type: Timestamp},
	)
}()

// ReadDayDrops selects the discards of aggregation (and the invalid
// messages, of none) that have current lines on day (with their figures)
// or fall in [from, until) by window, event time, or arrival when they
// have no event time. By pedido_id (NULL first), reason, arrival.
func ReadDayDrops(ctx context.Context, r Reader, day int32, aggregation string, from, until time.Time) ([]DayDrop, error) {
	s := dayDropsQuery.statement(one(DateValue(day)), one(StringValue(aggregation)), one(TimeValue(from)), one(TimeValue(until)))
	return run(ctx, r, s, []string{"pedido_id", "reason", "event_time", "window_start", "received_at", "pais", "importe", "unidades"}, func(c *cells) DayDrop {
		d := DayDrop{Discard: discardOf(c)}
		if d.Matched = !c.null("importe"); d.Matched {
			d.Pais, d.Importe, d.Unidades = c.str("pais"), c.dec("importe"), c.int("unidades")
		}
		return d
	})
}

// Pane is one row of the panes table as a replay compares it.
type Pane struct {
	WindowStart time.Time
	Key         string
	PaneIndex   int64
	Timing      string
	Importe     numeric.Dec
	Pedidos     int64
	Unidades    int64
}

// panesRead is the panes read of one declared aggregation's view.
func panesRead(v View) *NamedQuery {
	return newRead(viewReadName("panes", v.Name), v.Panes,
		"SELECT window_start, "+v.Key+" AS pane_key, pane_index, timing, importe, pedidos, unidades\n"+
			"FROM "+v.Panes+"\n"+
			"WHERE aggregation = @aggregation AND window_start IN UNNEST(@starts)\n"+
			"ORDER BY window_start, pane_key, pane_index",
		ParamSpec{Name: "aggregation", Type: String},
		ParamSpec{Name: "starts", Type: Timestamp, Array: true},
	)
}

// ReadPanes returns the panes of aggregation in the panes table of the
// declared aggregation table (the same name, but in tests) for the windows
// starting at starts, by window start, key and pane index.
func ReadPanes(ctx context.Context, r Reader, table, aggregation string, starts []time.Time) ([]Pane, error) {
	q, ok := viewRead("panes", table)
	if !ok {
		return nil, fmt.Errorf("read panes: aggregation %q is not declared (internal/aggregation), so it has no panes table", table)
	}
	vs := make([]Value, len(starts))
	for i, t := range starts {
		vs[i] = TimeValue(t)
	}
	s := q.statement(one(StringValue(aggregation)), vs)
	return run(ctx, r, s, []string{"window_start", "pane_key", "pane_index", "timing", "importe", "pedidos", "unidades"}, func(c *cells) Pane {
		return Pane{WindowStart: c.time("window_start"), Key: c.str("pane_key"), PaneIndex: c.int("pane_index"), Timing: c.str("timing"),
			Importe: c.dec("importe"), Pedidos: c.int("pedidos"), Unidades: c.int("unidades")}
	})
}

// viewReadName names a per-view read: base for ventas_hora_pais,
// "<base>:<view>" for the others.
func viewReadName(base, view string) string {
	if view == VentasHoraPais {
		return base
	}
	return base + ":" + view
}
