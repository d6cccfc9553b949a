package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// Tick prints what a tick did, one line per aggregation and pane.
func Tick(w io.Writer, res stream.TickResult) {
	now := res.Now.UTC().Format("15:04:05")
	for _, a := range res.Aggregations {
		if a.Busy {
			fmt.Fprintf(w, "%s tick: another tick holds the lease; nothing done\n", now)
			continue
		}
		fmt.Fprintln(w, TickLine(now, a))
		for _, p := range a.Panes {
			fmt.Fprintf(w, "         %s\n", PaneLine(p))
		}
		for _, f := range a.Failing {
			fmt.Fprintf(w, "         %s\n", FailingLine(f))
		}
		if more := a.FailingCells - len(a.Failing); more > 0 {
			fmt.Fprintf(w, "         ... and %s\n", Counted(more, "more failing cell", "more failing cells"))
		}
	}
}

// TickLine is a tick's summary line for one aggregation, now being the
// tick's time as the line starts with it ("15:04:05"): the e2e and stack
// tests rebuild the demo's story outline with it.
func TickLine(now string, a stream.AggregationTick) string {
	return fmt.Sprintf("%s tick: watermark %s, %s, %s expired%s", now, hhmm(a.Watermark),
		Counted(len(a.Panes), "pane", "panes"), Counted(a.Expired, "window", "windows"), failingCount(a))
}

// failingCount is the tick line's note of the cells it could not process;
// nothing when there are none, so that a healthy tick reads as before.
func failingCount(a stream.AggregationTick) string {
	if a.FailingCells == 0 {
		return ""
	}
	return ", " + Counted(a.FailingCells, "cell", "cells") + " failing (retried at every tick)"
}

// Counted writes a count with the noun that agrees with it, with
// thousands separators: 1 pane, 1,200 panes.
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
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
		cell = strings.ToUpper(f.Key) + " " + hhmm(f.WindowStart) + "-" + hhmm(f.WindowEnd) + " (" + f.Path + ")"
	}
	return "failing " + cell + since + ": " + strings.Join(strings.Fields(f.Error), " ")
}

// OrderLine says in one line (plus a line per pane) what happened to an
// order.
func OrderLine(r stream.Result, eventTime string) string {
	fate := string(r.Fate())
	if r.Invalid != "" {
		fate = r.Invalid
	}
	line := fmt.Sprintf("order %-9s event %s: %s", r.PedidoID, eventTime, fate)
	// Every aggregation's window on the order's line, then the panes: with
	// several aggregations a window note must not trail another's pane.
	var panes string
	for _, o := range r.Aggregations {
		if !o.Window.Start.IsZero() {
			line += fmt.Sprintf(" (window %s-%s %s)", hhmm(o.Window.Start), hhmm(o.Window.End), o.Key)
		}
		for _, p := range o.Panes {
			panes += "\n         " + PaneLine(p)
		}
	}
	return line + panes
}

func hhmm(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}

// PaneLine is one pane: its key, window, index and timing, and its
// measures, money with its scale.
func PaneLine(p window.Pane) string {
	return fmt.Sprintf("pane %s %s-%s #%d %-7s importe=%s pedidos=%s unidades=%s",
		strings.ToUpper(p.Key), hhmm(p.WindowStart), hhmm(p.WindowEnd), p.Index, p.Timing,
		groupDigits(Money(p.Measures.Importe)), Thousands(p.Measures.Pedidos), Thousands(p.Measures.Unidades))
}
