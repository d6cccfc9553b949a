package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Request names the day to reconcile.
type Request struct {
	Date        string         // YYYY-MM-DD, the fecha of lineas_pedido
	Aggregation string         // "" means window.Defaults().Name (ventas_hora_pais)
	Location    *time.Location // the zone of the real-time day; nil means UTC
}

// Run loads the day's figures through q and compares them.
func Run(ctx context.Context, q warehouse.Querier, req Request) (Report, error) {
	in, err := Load(ctx, q, req)
	if err != nil {
		return Report{}, err
	}
	return Compare(in)
}

// Load reads the three inputs of Compare with three queries: the batch
// totals per country, the view's rows of the day, and the drops.
func Load(ctx context.Context, q warehouse.Querier, req Request) (Input, error) {
	d, err := time.Parse(time.DateOnly, req.Date)
	if err != nil {
		return Input{}, fmt.Errorf("reconcile: date %q: want YYYY-MM-DD", req.Date)
	}
	agg := req.Aggregation
	if agg == "" {
		agg = window.Defaults().Name
	}
	if err := checkName(agg); err != nil {
		return Input{}, fmt.Errorf("reconcile: %w", err)
	}
	loc := req.Location
	if loc == nil {
		loc = time.UTC
	}
	day := warehouse.DateOf(d)
	from := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC()
	to := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc).UTC()
	in := Input{Date: req.Date, Aggregation: agg, DayStart: from, DayEnd: to}

	res, err := q.Query(ctx, batchSQL(day))
	if err != nil {
		return Input{}, fmt.Errorf("reconcile %s: read %s: %w", req.Date, warehouse.LineasPedido, err)
	}
	if in.Batch, err = scan(res, func(r row) (Total, error) {
		m, err := r.measures("importe", "pedidos", "unidades")
		return Total{Pais: r.str("pais"), Measures: m}, err
	}); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %s: %w", req.Date, warehouse.LineasPedido, err)
	}

	if res, err = q.Query(ctx, hoursSQL(agg, from, to)); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: read %s: %w", req.Date, warehouse.VentasHoraPais, err)
	}
	if in.Hours, err = scan(res, func(r row) (Hour, error) {
		h := Hour{Pais: r.str("pais"), Timing: window.Timing(r.str("timing"))}
		var err error
		if h.WindowStart, err = r.time("window_start"); err != nil {
			return h, err
		}
		if h.WindowEnd, err = r.time("window_end"); err != nil {
			return h, err
		}
		if h.PaneIndex, err = r.int("pane_index"); err != nil {
			return h, err
		}
		h.Measures, err = r.measures("importe", "pedidos", "unidades")
		return h, err
	}); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %s: %w", req.Date, warehouse.VentasHoraPais, err)
	}
	if len(in.Hours) > 0 {
		in.WindowSize = in.Hours[0].WindowEnd.Sub(in.Hours[0].WindowStart)
	}

	if res, err = q.Query(ctx, dropsSQL(agg, day, from, to)); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: read %s: %w", req.Date, warehouse.PedidosDescartados, err)
	}
	if in.Drops, err = scan(res, func(r row) (Drop, error) {
		d := Drop{PedidoID: r.nullable("pedido_id"), Reason: r.str("reason"), Pais: r.nullable("pais")}
		var err error
		for _, c := range []struct {
			col string
			t   *time.Time
		}{{"event_time", &d.EventTime}, {"window_start", &d.WindowStart}, {"received_at", &d.ReceivedAt}} {
			if r.null(c.col) {
				continue
			}
			if *c.t, err = r.time(c.col); err != nil {
				return d, err
			}
		}
		if d.Matched = !r.null("importe"); d.Matched {
			d.Batch, err = r.measures("importe", "", "unidades")
			d.Batch.Pedidos = 1
		}
		return d, err
	}); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %s: %w", req.Date, warehouse.PedidosDescartados, err)
	}
	return in, nil
}

// row reads a Result row by column name.
type row struct {
	cols map[string]int
	vals []string
}

func (r row) str(c string) string {
	if i, ok := r.cols[c]; ok && i < len(r.vals) {
		return r.vals[i]
	}
	return ""
}

func (r row) null(c string) bool { return r.str(c) == "NULL" }

func (r row) nullable(c string) string {
	if r.null(c) {
		return ""
	}
	return r.str(c)
}

func (r row) time(c string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, r.str(c))
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: %w", c, err)
	}
	return t.UTC(), nil
}

func (r row) int(c string) (int64, error) {
	n, err := strconv.ParseInt(r.str(c), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("column %s: %w", c, err)
	}
	return n, nil
}

// measures reads importe, pedidos and unidades; an empty column name
// leaves that measure zero. SUM over no rows is NULL, read as zero.
func (r row) measures(importe, pedidos, unidades string) (window.Measures, error) {
	var m window.Measures
	if importe != "" && !r.null(importe) {
		d, err := numeric.Parse(r.str(importe), false)
		if err != nil {
			return m, fmt.Errorf("column %s: %w", importe, err)
		}
		m.Importe = d
	}
	for _, c := range []struct {
		col string
		n   *int64
	}{{pedidos, &m.Pedidos}, {unidades, &m.Unidades}} {
		if c.col == "" || r.null(c.col) {
			continue
		}
		n, err := r.int(c.col)
		if err != nil {
			return m, err
		}
		*c.n = n
	}
	return m, nil
}

func scan[T any](res warehouse.Result, f func(row) (T, error)) ([]T, error) {
	cols := make(map[string]int, len(res.Columns))
	for i, c := range res.Columns {
		cols[c] = i
	}
	out := make([]T, 0, len(res.Rows))
	for i, vals := range res.Rows {
		v, err := f(row{cols: cols, vals: vals})
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}
