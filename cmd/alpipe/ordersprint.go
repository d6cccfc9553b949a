package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// printTick prints what a tick did, one line per aggregation and pane.
func printTick(w io.Writer, res stream.TickResult) {
	now := res.Now.UTC().Format("15:04:05")
	for _, a := range res.Aggregations {
		if a.Busy {
			fmt.Fprintf(w, "%s tick: another tick holds the lease; nothing done\n", now)
			continue
		}
		failing := ""
		if a.FailingCells > 0 {
			failing = ", " + counted(a.FailingCells, "cell", "cells") + " failing (retried at every tick)"
		}
		fmt.Fprintf(w, "%s tick: watermark %s, %s, %s expired%s\n", now, hhmm(a.Watermark),
			counted(len(a.Panes), "pane", "panes"), counted(a.Expired, "window", "windows"), failing)
		for _, p := range a.Panes {
			fmt.Fprintf(w, "         %s\n", paneLine(p))
		}
		for _, f := range a.Failing {
			fmt.Fprintf(w, "         %s\n", local.FailingLine(f))
		}
		if more := a.FailingCells - len(a.Failing); more > 0 {
			fmt.Fprintf(w, "         ... and %s\n", counted(more, "more failing cell", "more failing cells"))
		}
	}
}

// counted is plural with thousands separators: 1 pane, 1,200 panes.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// resultLine says in one line (plus a line per pane) what happened to an order.
func resultLine(r stream.Result, eventTime string) string {
	fate := string(r.Fate())
	if r.Invalid != "" {
		fate = r.Invalid
	}
	line := fmt.Sprintf("order %-9s event %s: %s", r.PedidoID, eventTime, fate)
	for _, o := range r.Aggregations {
		if !o.Window.Start.IsZero() {
			line += fmt.Sprintf(" (window %s-%s %s)", hhmm(o.Window.Start), hhmm(o.Window.End), o.Key)
		}
		for _, p := range o.Panes {
			line += "\n         " + paneLine(p)
		}
	}
	return line
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
		money(p.Measures.Importe), thousands(p.Measures.Pedidos), thousands(p.Measures.Unidades))
}

// money prints an exact amount with thousands separators and at least two
// decimals: 65.4 -> 65.40.
func money(d numeric.Dec) string { return groupDigits(twoDecimals(d.String())) }
