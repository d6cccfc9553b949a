package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/render"
)

// aggregationDoc is one aggregation as `aggregations --format json` prints
// it; durations become <name>_seconds, as in every JSON answer.
type aggregationDoc struct {
	Aggregation     string        `json:"aggregation"`
	Description     string        `json:"description"`
	File            string        `json:"file"`
	Window          string        `json:"window"`
	Size            time.Duration `json:"size,omitempty"`
	Period          time.Duration `json:"period,omitempty"`
	Gap             time.Duration `json:"gap,omitempty"`
	Key             string        `json:"key"`
	Measures        []string      `json:"measures"`
	OutOfOrderness  time.Duration `json:"out_of_orderness"`
	IdleTimeout     time.Duration `json:"idle_timeout"`
	EarlyDelay      time.Duration `json:"early_delay"`
	AllowedLateness time.Duration `json:"allowed_lateness"`
	LateDelay       time.Duration `json:"late_delay"`
	Accumulation    string        `json:"accumulation"`
	PanesTable      string        `json:"panes_table"`
	View            string        `json:"view"`
}

func runAggregations(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	decls, err := aggregation.Default()
	if err != nil {
		return err
	}
	docs := make([]aggregationDoc, 0, len(decls))
	for _, d := range decls {
		docs = append(docs, aggregationDoc{
			Aggregation: d.Name, Description: d.Description, File: "internal/aggregation/" + d.File,
			Window: d.WindowType, Size: d.Size, Period: d.Period, Gap: d.Gap, Key: d.Key, Measures: d.Measures,
			OutOfOrderness: d.OutOfOrderness, IdleTimeout: d.IdleTimeout, EarlyDelay: d.EarlyDelay,
			AllowedLateness: d.AllowedLateness, LateDelay: d.LateDelay, Accumulation: string(d.Accumulation),
			PanesTable: d.PanesTable(), View: d.View(),
		})
	}
	if c.format == "json" {
		return render.JSON(stdout, docs)
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		window := d.Window + " " + render.Short(d.Size)
		if d.Gap > 0 {
			window = d.Window + ", gap " + render.Short(d.Gap)
		}
		if d.Period > 0 {
			window += " every " + render.Short(d.Period)
		}
		fmt.Fprintf(stdout, "%s: %s\n", d.Aggregation, d.Description)
		fmt.Fprintf(stdout, "  window:   %s   key: %s   measures: %s\n", window, d.Key, strings.Join(d.Measures, ", "))
		fmt.Fprintf(stdout, "  timing:   out-of-orderness %s, idle %s, early %s, lateness %s, late delay %s\n",
			render.Short(d.OutOfOrderness), render.Short(d.IdleTimeout), render.Short(d.EarlyDelay), render.Short(d.AllowedLateness), render.Short(d.LateDelay))
		fmt.Fprintf(stdout, "  panes:    %s   view: %s (%s)\n", d.PanesTable, d.View, strings.ToLower(d.Accumulation))
		fmt.Fprintf(stdout, "  file:     %s\n", d.File)
	}
	return nil
}
