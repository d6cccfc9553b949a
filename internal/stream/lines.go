package stream

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/window"
)

// The lines of ticks, orders and panes live beside the types they print, so
// that render, which stream prints with, needs neither stream nor window.

// WriteTick prints what a tick did, one line per aggregation and pane.
func WriteTick(w io.Writer, res TickResult) {
	now := res.Now.UTC().Format("15:04:05")
	named := len(res.Aggregations) > 1
	for _, a := range res.Aggregations {
		fmt.Fprintln(w, TickLine(now, a, named))
		for _, p := range a.Panes {
			fmt.Fprintf(w, "         %s\n", paneLine(p))
		}
		for _, f := range a.Failing {
			fmt.Fprintf(w, "         %s\n", failingLine(f))
		}
		if more := a.FailingCells - len(a.Failing); more > 0 {
			fmt.Fprintf(w, "         ... and %s\n", render.Counted(more, "more failing window", "more failing windows"))
		}
	}
}

// TickLine is a tick's summary line for one aggregation; named (several
// aggregations ran) puts the aggregation's name after "tick". The stack
// tests rebuild the demo's story outline with it.
func TickLine(now string, a AggregationTick, named bool) string {
	tick := now + " tick"
	if named {
		tick += " " + a.Aggregation
	}
	if a.Busy {
		return tick + ": another tick holds the lease; nothing done"
	}
	return fmt.Sprintf("%s: watermark %s, %s, %s expired%s", tick, hhmm(a.Watermark),
		render.Counted(len(a.Panes), "pane", "panes"), render.Counted(a.Expired, "window", "windows"), failingCount(a))
}

func failingCount(a AggregationTick) string {
	if a.FailingCells == 0 {
		return ""
	}
	return ", " + render.Counted(a.FailingCells, "window", "windows") + " failing (retried at every tick)"
}

// failingLine is what a person needs to find the document to repair.
func failingLine(f FailingWindow) string {
	since := ""
	if !f.Since.IsZero() {
		since = " since " + render.When(f.Since)
	}
	cell := f.Path
	if !f.WindowStart.IsZero() {
		cell = hhmm(f.WindowStart) + "-" + hhmm(f.WindowEnd) + " (" + f.Path + ")"
	}
	return "failing " + cell + since + ": " + strings.Join(strings.Fields(f.Error), " ")
}

// OrderLine says what happened to an order: its fate and window in the
// first aggregation, then a line for every other aggregation.
func OrderLine(r Result, eventTime string) string {
	fate := string(r.Fate())
	if r.Invalid != "" {
		fate = r.Invalid
	}
	line := fmt.Sprintf("order %-9s event %s: %s", r.PedidoID, eventTime, fate)
	for i, o := range r.Aggregations {
		if i == 0 {
			if !o.Window.Start.IsZero() {
				line += fmt.Sprintf(" (window %s-%s %s)", hhmm(o.Window.Start), hhmm(o.Window.End), o.Key)
			}
		} else {
			line += "\n         " + aggregationLine(o)
		}
	}
	return line
}

// aggregationLine: "ventas_sku_hora_movil: accepted (MOCH-40L-AZ in 4
// windows 16:15-17:15 to 17:00-18:00)". The stack tests read the
// aggregation and fate from it.
func aggregationLine(o Outcome) string {
	line := o.Aggregation + ": " + string(o.Fate)
	var parts []string
	for i := 0; i < len(o.Elements); {
		key := o.Elements[i].Key
		var in, late []window.Window
		for ; i < len(o.Elements) && o.Elements[i].Key == key; i++ {
			if e := o.Elements[i]; e.Fate == TooLate {
				late = append(late, e.Window)
			} else {
				in = append(in, e.Window)
			}
		}
		part := key
		if len(in) > 0 {
			part += " in " + windows(in)
		}
		if len(late) > 0 {
			if len(in) > 0 {
				part += ","
			}
			part += " too late for " + windows(late)
		}
		parts = append(parts, part)
	}
	if n := len(o.SKUMissing); n > 0 {
		parts = append(parts, render.Counted(n, "line", "lines")+" without a SKU")
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, "; ") + ")"
	}
	return line
}

func windows(ws []window.Window) string {
	span := func(w window.Window) string { return hhmm(w.Start) + "-" + hhmm(w.End) }
	if len(ws) == 1 {
		return "window " + span(ws[0])
	}
	return render.Counted(len(ws), "window", "windows") + " " + span(ws[0]) + " to " + span(ws[len(ws)-1])
}

func hhmm(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}

func paneLine(p window.Pane) string {
	return fmt.Sprintf("pane %s %s-%s #%d %-7s importe=%s pedidos=%s unidades=%s",
		strings.ToUpper(p.Key), hhmm(p.WindowStart), hhmm(p.WindowEnd), p.Index, p.Timing,
		render.GroupDigits(render.Money(p.Measures.Importe)), render.Thousands(p.Measures.Pedidos), render.Thousands(p.Measures.Unidades))
}
