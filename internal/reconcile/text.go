package reconcile

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/window"
)

// WriteText renders the report for a person: the per-country verdict
// first, then the hourly detail and the drops that explain figures.
func (r Report) WriteText(w io.Writer) error {
	ew := &bytes.Buffer{}
	fmt.Fprintf(ew, "reconcile %s, aggregation %s\n", r.Date, r.Aggregation)
	fmt.Fprintf(ew, "real time: windows starting in [%s, %s); batch: lineas_pedido with fecha %s\n",
		r.DayStart.Format(time.RFC3339), r.DayEnd.Format(time.RFC3339), r.Date)
	fmt.Fprintf(ew, "lineas_pedido has no time of day, so each country is judged on its daily totals; the hours are detail.\n")
	fmt.Fprintf(ew, "figures are importe/pedidos/unidades; difference = batch - real time; residual = difference - too_late - invalid\n\n")

	if len(r.Countries) == 0 {
		ew.WriteString("nothing to compare: no lines, windows or drops for this day\n")
		return write(w, ew)
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAIS\tBATCH\tREAL TIME\tDIFFERENCE\tTOO_LATE\tINVALID\tRESIDUAL\tSTATUS\tOPEN")
	for _, c := range r.Countries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", c.Pais, fig(c.Batch), fig(c.RealTime),
			fig(c.Difference), fig(c.TooLate), fig(c.Invalid), fig(c.Residual), c.Status, c.OpenWindows)
	}
	_ = tw.Flush()

	if len(r.Hours) > 0 {
		fmt.Fprintf(ew, "\nhours: the window's current value (latest pane) and the drops placed in it\n")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WINDOW_START\tPAIS\tREAL TIME\tTIMING\tPANE\tTOO_LATE\tINVALID")
		for _, h := range r.Hours {
			rt, timing, pane := "-", "-", "-"
			if h.HasPane {
				rt, timing, pane = fig(h.RealTime), string(h.Timing), strconv.FormatInt(h.PaneIndex, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", h.WindowStart.Format(time.RFC3339), cmp.Or(h.Pais, "-"),
				rt, timing, pane, h.TooLate, h.Invalid)
		}
		_ = tw.Flush()
	}

	if len(r.Explanations) > 0 {
		fmt.Fprintf(ew, "\ndropped orders with lines on %s (what they explain)\n", r.Date)
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PEDIDO_ID\tPAIS\tBATCH\tWINDOW/EVENT TIME\tREASON")
		for _, d := range r.Explanations {
			when := "-"
			switch {
			case !d.WindowStart.IsZero():
				when = d.WindowStart.Format(time.RFC3339)
			case !d.EventTime.IsZero():
				when = d.EventTime.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.PedidoID, d.Pais, fig(d.Batch), when, render.Clip(d.Reason, 120))
		}
		_ = tw.Flush()
	}
	if r.UnmatchedTooLate+r.UnmatchedInvalid > 0 {
		fmt.Fprintf(ew, "\n%d too-late and %d invalid drops in this day's windows have no lines on %s: they explain nothing here\n",
			r.UnmatchedTooLate, r.UnmatchedInvalid, r.Date)
	}
	if r.OK() {
		ew.WriteString("\nevery difference is explained by counted drops\n")
	} else {
		fmt.Fprintf(ew, "\nUNEXPLAINED differences in %s\n", strings.Join(r.Unexplained, ", "))
	}
	return write(w, ew)
}

func write(w io.Writer, b *bytes.Buffer) error {
	_, err := b.WriteTo(w)
	return err
}

func fig(m window.Measures) string {
	return render.Money(m.Importe) + "/" + strconv.FormatInt(m.Pedidos, 10) + "/" + strconv.FormatInt(m.Unidades, 10)
}
