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
		fmt.Fprintln(w, TickLine(now, a))
		for _, p := range a.Panes {
			fmt.Fprintf(w, "         %s\n", paneLine(p))
		}
		for _, f := range a.Failing {
			fmt.Fprintf(w, "         %s\n", FailingLine(f))
		}
		if more := a.FailingCells - len(a.Failing); more > 0 {
			fmt.Fprintf(w, "         ... and %s\n", plural(more, "more failing cell", "more failing cells"))
		}
	}
}

// TickLine is a tick's summary line for one aggregation, now being the
// tick's time as the line starts with it ("15:04:05"): the e2e and stack
// tests rebuild the demo's story outline with it.
func TickLine(now string, a stream.AggregationTick) string {
	return fmt.Sprintf("%s tick: watermark %s, %s, %s expired%s", now, clockHHMM(a.Watermark),
		plural(len(a.Panes), "pane", "panes"), plural(a.Expired, "window", "windows"), failingCount(a))
}

// failingCount is the tick line's note of the cells it could not process;
// nothing when there are none, so that a healthy tick reads as before.
func failingCount(a stream.AggregationTick) string {
	if a.FailingCells == 0 {
		return ""
	}
	return ", " + plural(a.FailingCells, "cell", "cells") + " failing (retried at every tick)"
}

// FailingLine says which cell a tick could not process, since when, and
// why, on one line: what a person needs to find the document to repair.
func FailingLine(f stream.FailingCell) string {
	since := ""
	if !f.Since.IsZero() {
		since = " since " + f.Since.UTC().Format("2006-01-02 15:04:05")
	}
	cell := f.Path
	if !f.WindowStart.IsZero() {
		cell = strings.ToUpper(f.Key) + " " + clockHHMM(f.WindowStart) + "-" + clockHHMM(f.WindowEnd) + " (" + f.Path + ")"
	}
	return "failing " + cell + since + ": " + strings.Join(strings.Fields(f.Error), " ")
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
			line += fmt.Sprintf(" (window %s-%s %s)", clockHHMM(o.Window.Start), clockHHMM(o.Window.End), o.Key)
		}
		for _, p := range o.Panes {
			line += "\n         " + paneLine(p)
		}
	}
	return line
}

func clockHHMM(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}

func paneLine(p window.Pane) string {
	return fmt.Sprintf("pane %s %s-%s #%d %-7s importe=%s pedidos=%d unidades=%d",
		strings.ToUpper(p.Key), clockHHMM(p.WindowStart), clockHHMM(p.WindowEnd), p.Index, p.Timing,
		p.Measures.Importe, p.Measures.Pedidos, p.Measures.Unidades)
}
