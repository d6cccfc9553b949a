package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// EventHour is the UTC hour of the event time given to an order of
// lineas_pedido, which has a date and no time (see the package comment).
const EventHour = 12

// EventTimeOf is the event time of an order of lineas_pedido dated day.
func EventTimeOf(day int32) time.Time {
	return warehouse.DayTime(day).Add(EventHour * time.Hour)
}

// Table reads the orders of lineas_pedido one date at a time (each date's
// result, one row per order, is the most held in memory), in date order,
// each date starting with a Cut.
type Table struct {
	q     warehouse.Querier
	dates Dates

	days []int32 // dates with lines, listed on the first Next
	next int     // index in days of the next date to read
	cols []string
	rows [][]string
	row  int
	day  int32
}

var _ Source = (*Table)(nil)

// NewTable reads lineas_pedido through q, for dates (zero: all).
func NewTable(q warehouse.Querier, dates Dates) *Table {
	return &Table{q: q, dates: dates, days: nil}
}

// Next implements Source.
func (t *Table) Next(ctx context.Context) (Message, error) {
	if t.days == nil {
		if err := t.listDays(ctx); err != nil {
			return Message{}, err
		}
	}
	for t.row >= len(t.rows) {
		if t.next >= len(t.days) {
			return Message{}, io.EOF
		}
		t.day = t.days[t.next]
		t.next++
		res, err := t.q.Query(ctx, ordersSQL(t.day))
		if err != nil {
			return Message{}, fmt.Errorf("read orders of %s: %w", warehouse.FormatDate(t.day), err)
		}
		t.cols, t.rows, t.row = res.Columns, res.Rows, 0
	}
	r := t.rows[t.row]
	t.row++
	m, err := t.message(r)
	if err != nil {
		return Message{}, fmt.Errorf("orders of %s, row %d: %w", warehouse.FormatDate(t.day), t.row, err)
	}
	m.Cut = t.row == 1
	return m, nil
}

func (t *Table) listDays(ctx context.Context) error {
	q := "SELECT DISTINCT fecha FROM " + warehouse.LineasPedido
	if t.dates.Set {
		q += " WHERE fecha >= DATE '" + warehouse.FormatDate(t.dates.From) + "' AND fecha <= DATE '" + warehouse.FormatDate(t.dates.To) + "'"
	}
	res, err := t.q.Query(ctx, q+" ORDER BY fecha")
	if err != nil {
		return fmt.Errorf("list the dates of %s: %w", warehouse.LineasPedido, err)
	}
	t.days = make([]int32, 0, len(res.Rows))
	for _, r := range res.Rows {
		if len(r) != 1 {
			return fmt.Errorf("list the dates of %s: %d columns", warehouse.LineasPedido, len(r))
		}
		d, err := time.Parse(time.DateOnly, r[0])
		if err != nil {
			return fmt.Errorf("list the dates of %s: %w", warehouse.LineasPedido, err)
		}
		t.days = append(t.days, warehouse.DateOf(d))
	}
	slices.Sort(t.days)
	return nil
}

// ordersSQL groups a date's current lines per order.
func ordersSQL(day int32) string {
	return "SELECT l.pedido_id AS pedido_id, MIN(l.pais) AS pais, MAX(l.pais) AS pais_max, MIN(l.cliente_id) AS cliente_id,\n" +
		"  SUM(l.importe) AS importe, SUM(l.cantidad) AS unidades\n" +
		"FROM (\n" + reconcile.CurrentLinesSQL(day) + "\n) AS l\n" +
		"GROUP BY l.pedido_id\n" +
		"ORDER BY pedido_id"
}

// summarySKU names the one line of a replayed order, which carries the sum
// of its lines' quantities.
const summarySKU = "*"

func (t *Table) message(r []string) (Message, error) {
	get := func(name string) string {
		if i := slices.Index(t.cols, name); i >= 0 && i < len(r) {
			return r[i]
		}
		return ""
	}
	id := get("pedido_id")
	m := Message{
		ID:         warehouse.LineasPedido + "/" + warehouse.FormatDate(t.day) + "/" + id,
		Attributes: map[string]string{order.EventTimeAttribute: EventTimeOf(t.day).Format(time.RFC3339)},
	}
	if a, b := get("pais"), get("pais_max"); a != b {
		m.Invalid = fmt.Sprintf("invalid: the lines of pedido_id %s name several countries (%s, %s)", id, a, b)
		return m, nil
	}
	importe, err := numeric.Parse(get("importe"), false)
	if err != nil {
		return Message{}, fmt.Errorf("importe: %w", err)
	}
	unidades, err := strconv.ParseInt(get("unidades"), 10, 64)
	if err != nil {
		return Message{}, fmt.Errorf("unidades: %w", err)
	}
	o := order.Order{PedidoID: id, Pais: get("pais"), ImporteTotal: importe,
		Lineas: []order.Line{{SKU: summarySKU, Cantidad: unidades}}}
	if c := get("cliente_id"); c != "NULL" {
		o.ClienteID = c
	}
	if m.Data, err = json.Marshal(o); err != nil {
		return Message{}, err
	}
	return m, nil
}
