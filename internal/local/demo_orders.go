package local

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// DemoOrders plays an orders story (see testdata/pedidos/historia.jsonl)
// against a virtual-clock server: each order is pushed at its arrival time,
// each tick runs at its time, and what happened is printed (stream's order
// and tick lines: with several aggregations, each named), then the panes
// and dashboard view of ventas_hora_pais, the view of every other
// aggregation that ran, and the discarded orders.
func (s *Server) DemoOrders(ctx context.Context, w io.Writer, story string) error {
	if !s.Clock.Virtual() {
		return fmt.Errorf("the orders story needs a virtual-clock server")
	}
	srv := client.Server{URL: s.URL}
	steps, err := client.ReadStepsFile(story)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== Orders in real time (processing time in UTC) ==")
	var ran []string // the aggregations the ticks ran, in configuration order
	for _, st := range steps {
		at := st.Arrival
		if !st.Tick.IsZero() {
			at = st.Tick
		}
		if !at.IsZero() {
			if _, err := srv.SetClock(ctx, at); err != nil {
				return err
			}
		}
		now := s.Clock.Now().Format("15:04:05")
		if !st.Tick.IsZero() {
			res, err := srv.Tick(ctx)
			if err != nil {
				return err
			}
			stream.WriteTick(w, res)
			for _, a := range res.Aggregations {
				if !slices.Contains(ran, a.Aggregation) {
					ran = append(ran, a.Aggregation)
				}
			}
			continue
		}
		res, err := srv.Push(ctx, st, at)
		if err != nil {
			return err
		}
		res.Result.Aggregations = Headlined(res.Result.Aggregations)
		line := now + " " + stream.OrderLine(res.Result, st.EventTime)
		fmt.Fprintln(w, line)
		if st.Note != "" {
			fmt.Fprintf(w, "         ^ %s\n", st.Note)
		}
	}
	if err := s.printQueries(ctx, w, []titledQuery{
		{"Every pane (ventas_hora_pais_paneles)", warehouse.ListPanes},
		{"Dashboard view (ventas_hora_pais): current value per hour and country", warehouse.ListView},
	}); err != nil {
		return err
	}
	for _, name := range ran {
		if name == warehouse.VentasHoraPais {
			continue
		}
		if err := s.printView(ctx, w, name); err != nil {
			return err
		}
	}
	return s.printQueries(ctx, w, []titledQuery{
		{"Discarded orders (pedidos_descartados)", warehouse.ListDiscards},
	})
}

// Headlined puts ventas_hora_pais first among an order's outcomes, the
// others in configuration order: the demo heads an order's line with it,
// whatever aggregation sorts before it (the e2e and stack stories read the
// lines so).
func Headlined(os []stream.Outcome) []stream.Outcome {
	i := slices.IndexFunc(os, func(o stream.Outcome) bool { return o.Aggregation == warehouse.VentasHoraPais })
	if i <= 0 {
		return os
	}
	return slices.Concat(os[i:i+1], os[:i], os[i+1:])
}

// printView prints the view of the declared aggregation name, the current
// value of each window and key, as the other listings are printed: the
// question a person asks of it, e.g. how a SKU sold over the last hour.
func (s *Server) printView(ctx context.Context, w io.Writer, name string) error {
	d, err := aggregation.Lookup(name)
	if err != nil {
		return err
	}
	listing, ok := warehouse.ViewListing(name)
	if !ok {
		return fmt.Errorf("print view: aggregation %q has no view listing", name)
	}
	windows := "hour"
	if d.WindowType == aggregation.Session {
		windows = "session, gap " + render.Short(d.Gap) + ","
	} else if d.WindowType == aggregation.Sliding {
		windows = fmt.Sprintf("sliding window (%s every %s)", render.Short(d.Size), render.Short(d.Period))
	} else if d.Size != time.Hour {
		windows = render.Short(d.Size) + " window"
	}
	return s.printQueries(ctx, w, []titledQuery{
		{fmt.Sprintf("Dashboard view (%s): current value per %s and %s", d.View(), windows, d.Key), listing},
	})
}
