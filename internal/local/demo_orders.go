package local

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// DemoOrders plays an orders story (see testdata/pedidos/historia.jsonl)
// against a virtual-clock server: each order is pushed at its arrival time,
// each tick runs at its time, and what happened is printed, then the panes,
// the dashboard view and the discarded orders.
func (s *Server) DemoOrders(ctx context.Context, w io.Writer, story string) error {
	if !s.Clock.Virtual() {
		return fmt.Errorf("the orders story needs a virtual-clock server")
	}
	steps, err := ReadStepsFile(story)
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
			if err := SetClock(ctx, s.URL, at); err != nil {
				return err
			}
		}
		now := s.Clock.Now().Format("15:04:05")
		if !st.Tick.IsZero() {
			res, err := Tick(ctx, s.URL)
			if err != nil {
				return err
			}
			PrintTick(w, res)
			continue
		}
		res, err := Push(ctx, s.URL, st, at)
		if err != nil {
			return err
		}
		line := now + " " + ResultLine(res.Result, st.EventTime)
		fmt.Fprintln(w, line)
		if st.Note != "" {
			fmt.Fprintf(w, "         ^ %s\n", st.Note)
		}
	}
	return s.printQueries(ctx, w, []titledQuery{
		{"Every pane (ventas_hora_pais_paneles)", "SELECT window_start, pais, pane_index, timing, importe, pedidos, unidades, watermark, emitted_at FROM ventas_hora_pais_paneles ORDER BY window_start, pais, pane_index"},
		{"Dashboard view (ventas_hora_pais): current value per hour and country", "SELECT window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index FROM ventas_hora_pais ORDER BY window_start, pais"},
		{"Discarded orders (pedidos_descartados)", "SELECT pedido_id, reason, event_time, window_start, watermark, received_at FROM pedidos_descartados ORDER BY received_at"},
	})
}

// PrintTick prints what a tick did, one line per aggregation and pane.
func PrintTick(w io.Writer, res stream.TickResult) {
	now := res.Now.UTC().Format("15:04:05")
	for _, a := range res.Aggregations {
		if a.Busy {
			fmt.Fprintf(w, "%s tick: another tick holds the lease; nothing done\n", now)
			continue
		}
		fmt.Fprintf(w, "%s tick: watermark %s, %d panes, %d windows expired\n", now, clock(a.Watermark), len(a.Panes), a.Expired)
		for _, p := range a.Panes {
			fmt.Fprintf(w, "         %s\n", paneLine(p))
		}
	}
}

// ResultLine says in one line (plus a line per pane) what happened to an order.
func ResultLine(r stream.Result, eventTime string) string {
	fate := string(r.Fate())
	if r.Invalid != "" {
		fate = r.Invalid
	}
	line := fmt.Sprintf("order %-9s event %s: %s", r.PedidoID, eventTime, fate)
	for _, o := range r.Aggregations {
		if !o.Window.Start.IsZero() {
			line += fmt.Sprintf(" (window %s-%s %s)", clock(o.Window.Start), clock(o.Window.End), o.Key)
		}
		for _, p := range o.Panes {
			line += "\n         " + paneLine(p)
		}
	}
	return line
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}

func paneLine(p window.Pane) string {
	return fmt.Sprintf("pane %s %s-%s #%d %-7s importe=%s pedidos=%d unidades=%d",
		strings.ToUpper(p.Key), clock(p.WindowStart), clock(p.WindowEnd), p.Index, p.Timing,
		p.Measures.Importe, p.Measures.Pedidos, p.Measures.Unidades)
}
