package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Request names the day to reconcile.
type Request struct {
	Date        string         // YYYY-MM-DD, the fecha of lineas_pedido
	Aggregation string         // "" means window.Defaults().Name (ventas_hora_pais)
	Location    *time.Location // the zone of the real-time day; nil means UTC
}

// Run loads and compares; r serves the named reads country_totals,
// windows_between and day_drops.
func Run(ctx context.Context, r warehouse.Reader, req Request) (Report, error) {
	in, err := Load(ctx, r, req)
	if err != nil {
		return Report{}, err
	}
	return Compare(in)
}

// Load reads Compare's input: the batch totals per country, the view's
// rows of the day, and the drops.
func Load(ctx context.Context, r warehouse.Reader, req Request) (Input, error) {
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

	if in.Batch, err = warehouse.ReadCountryTotals(ctx, r, day); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %w", req.Date, err)
	}
	if in.Hours, err = warehouse.ReadWindowsBetween(ctx, r, agg, from, to); err != nil {
		return Input{}, fmt.Errorf("reconcile %s: %w", req.Date, err)
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
