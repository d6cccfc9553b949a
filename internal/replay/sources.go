package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Table reads the orders of lineas_pedido one date at a time, in date
// order, each date starting with a Cut.
type Table struct {
	r     warehouse.Reader
	dates Dates

	days   []int32 // dates with lines, listed on the first Next
	next   int     // index in days of the next date to read
	orders []warehouse.DayOrder
	row    int
	day    int32
}

// NewTable reads lineas_pedido through r for dates (zero: all).
func NewTable(r warehouse.Reader, dates Dates) *Table {
	return &Table{r: r, dates: dates}
}

func (t *Table) Next(ctx context.Context) (Message, error) {
	if t.days == nil {
		if err := t.listDays(ctx); err != nil {
			return Message{}, err
		}
	}
	for t.row >= len(t.orders) {
		if t.next >= len(t.days) {
			return Message{}, io.EOF
		}
		t.day = t.days[t.next]
		t.next++
		orders, err := warehouse.ReadDayOrders(ctx, t.r, t.day)
		if err != nil {
			return Message{}, fmt.Errorf("read orders of %s: %w", warehouse.FormatDate(t.day), err)
		}
		t.orders, t.row = orders, 0
	}
	o := t.orders[t.row]
	t.row++
	m, err := t.message(o)
	if err != nil {
		return Message{}, fmt.Errorf("orders of %s, row %d: %w", warehouse.FormatDate(t.day), t.row, err)
	}
	m.Cut = t.row == 1
	return m, nil
}

func (t *Table) listDays(ctx context.Context) error {
	from, to := warehouse.FirstDate, warehouse.LastDate
	if t.dates.Set {
		from, to = t.dates.From, t.dates.To
	}
	days, err := warehouse.ReadLineDates(ctx, t.r, from, to)
	if err != nil {
		return fmt.Errorf("list the dates of %s: %w", warehouse.LineasPedido, err)
	}
	slices.Sort(days)
	t.days = days
	return nil
}

// Keeps says whether a replayed order keeps keyField: its country and
// customer, but its lines are one summary line (SKU "*", no price).
func (t *Table) Keeps(keyField string) bool { return keyField == "pais" || keyField == "cliente_id" }

// eventHour is the UTC hour given to an order of lineas_pedido, which has a
// date and no time: noon UTC is still date D from UTC-12 to UTC+11.
const eventHour = 12

// summarySKU names a replayed order's one line, the sum of its lines' quantities.
const summarySKU = "*"

func (t *Table) message(r warehouse.DayOrder) (Message, error) {
	id := r.PedidoID
	eventTime := warehouse.DayTime(t.day).Add(eventHour * time.Hour)
	m := Message{
		ID:         warehouse.LineasPedido + "/" + warehouse.FormatDate(t.day) + "/" + id,
		Attributes: map[string]string{order.EventTimeAttribute: eventTime.Format(time.RFC3339)},
	}
	if r.Pais != r.PaisMax {
		m.Invalid = fmt.Sprintf("invalid: the lines of pedido_id %s name several countries (%s, %s)",
			id, r.Pais, r.PaisMax)
		return m, nil
	}
	o := order.Order{PedidoID: id, Pais: r.Pais, ImporteTotal: r.Importe, ClienteID: r.ClienteID,
		Lineas: []order.Line{{SKU: summarySKU, Cantidad: r.Unidades}}}
	var err error
	if m.Data, err = json.Marshal(o); err != nil {
		return Message{}, err
	}
	return m, nil
}

// JSONL reads an orders file in the format of `alpipe publish`
// (client.ReadSteps) line by line, never holding the file (ReadSteps does).
// Ticks and arrival times (llegada) belong to live stories and are ignored:
// a replay decides its watermark itself. A line that is not a JSON object
// stops the replay with an *InputError.
type JSONL struct {
	sc   *bufio.Scanner
	line int
}

func NewJSONL(r io.Reader) *JSONL {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 10<<20) // client.ReadSteps' line limit
	return &JSONL{sc: sc}
}

func (j *JSONL) Next(ctx context.Context) (Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Message{}, err
		}
		if !j.sc.Scan() {
			if err := j.sc.Err(); err != nil {
				return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line+1, err)}
			}
			return Message{}, io.EOF
		}
		j.line++
		line := bytes.TrimSpace(j.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line, err)}
		}
		if _, ok := fields["tick"]; ok {
			continue
		}
		m := Message{ID: "line " + strconv.Itoa(j.line), Attributes: map[string]string{}}
		if raw, ok := fields[order.EventTimeAttribute]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				m.Attributes[order.EventTimeAttribute] = s
			}
			delete(fields, order.EventTimeAttribute)
		}
		delete(fields, "llegada")
		delete(fields, "nota")
		if raw, ok := fields["pedido"]; ok {
			m.Data = bytes.Clone(raw)
		} else {
			b, err := json.Marshal(fields)
			if err != nil {
				return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line, err)}
			}
			m.Data = b
		}
		return m, nil
	}
}
