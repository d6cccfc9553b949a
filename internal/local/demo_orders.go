package local

import (
	"context"
	"fmt"
	"io"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// DemoOrders plays an orders story (see testdata/pedidos/historia.jsonl)
// against a virtual-clock server: each order is pushed at its arrival time,
// each tick runs at its time, and what happened is printed, then the panes,
// the dashboard view and the discarded orders.
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
			render.Tick(w, res)
			continue
		}
		res, err := srv.Push(ctx, st, at)
		if err != nil {
			return err
		}
		line := now + " " + render.OrderLine(res.Result, st.EventTime)
		fmt.Fprintln(w, line)
		if st.Note != "" {
			fmt.Fprintf(w, "         ^ %s\n", st.Note)
		}
	}
	return s.printQueries(ctx, w, []titledQuery{
		{"Every pane (ventas_hora_pais_paneles)", warehouse.ListPanes},
		{"Dashboard view (ventas_hora_pais): current value per hour and country", warehouse.ListView},
		{"Discarded orders (pedidos_descartados)", warehouse.ListDiscards},
	})
}
