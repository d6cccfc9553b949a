package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	_ "time/tzdata" // --zone must work on machines without a zoneinfo database

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// runReconcile compares the real-time view with the batch order lines for
// one date. lineas_pedido has a date and no time of day, so the honest
// comparison is per day and country: the batch totals of fecha D against the
// sum of the real-time windows starting on D (in --zone). Every hour of the
// day is listed with its real-time value and the too-late drops and invalid
// messages placed in it; a dropped order explains the batch figures of its
// own lines. A country whose difference the drops do not explain exactly
// makes the command exit non-zero. The named reads run on the server's
// warehouse (see servedReads); see package reconcile.
func runReconcile(ctx context.Context, c *cmdline, stdout io.Writer) error {
	date := c.String("date", "", "fecha to reconcile, `YYYY-MM-DD` (required): judged per day and country, since lineas_pedido has no time of day; hours are listed as detail")
	agg := c.String("aggregation", window.Defaults().Name, "`NAME` of the aggregation whose panes the view ventas_hora_pais shows")
	zone := c.String("zone", "UTC", "time `ZONE` of the day on the real-time side (IANA name, e.g. Europe/Madrid)")
	if err := c.parse(); err != nil {
		return err
	}
	if *date == "" {
		return c.usagef("want --date YYYY-MM-DD")
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return c.usagef("--zone: %w", err)
	}
	if err := c.srv.Ping(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	rep, err := reconcile.Run(ctx, servedReads{c.srv}, reconcile.Request{Date: *date, Aggregation: *agg, Location: loc})
	if err != nil {
		return err
	}
	if err := report(stdout, c.format, rep, rep.WriteText); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("reconcile %s: unexplained differences in %s", *date, strings.Join(rep.Unexplained, ", "))
	}
	return nil
}

// servedReads runs reconcile's named reads on the warehouse serve holds
// (no second process may open its DuckDB), through the query endpoint: a
// statement written out with its values as literals, as the DuckDB adapter
// runs it itself, so the answer is the one an in-process Read gives, within
// the endpoint's caps (an answer past one is an error, never fewer rows).
type servedReads struct{ srv client.Server }

var _ reconcile.Warehouse = servedReads{}

func (r servedReads) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return r.srv.Query(ctx, s.Inline())
}
