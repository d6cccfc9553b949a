package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// The listings need no server: they print the embedded declarations and
// schemas that Terraform also creates the tables from, so what they print
// is what both warehouses hold.

type tableDoc struct {
	Table       string            `json:"table"`
	Kind        string            `json:"kind"`
	PartitionBy string            `json:"partitioned_by_day_of,omitempty"`
	ClusteredBy []string          `json:"clustered_by,omitempty"`
	Over        string            `json:"over,omitempty"`
	Columns     []warehouse.Field `json:"columns,omitempty"`
	Description string            `json:"description,omitempty"`
}

// tableDocs are the tables, then the views: a view's columns are those of
// the table it reads.
func tableDocs() []tableDoc {
	var docs []tableDoc
	for _, t := range warehouse.Tables() {
		docs = append(docs, tableDoc{Table: t.Name, Kind: "table", PartitionBy: t.PartitionField, ClusteredBy: t.Clustering, Columns: t.Schema})
	}
	for _, v := range warehouse.Views() {
		what := "the latest pane"
		if v.Accumulation == warehouse.Discarding {
			what = "the sum of the panes"
		}
		d := tableDoc{Table: v.Name, Kind: "view", Over: v.Panes, Description: what + " of each (window_start, " + v.Key + "): the dashboard's figures"}
		if v.Session {
			d.Description += "; sessions whose latest pane is MERGED are left out"
		}
		if t, err := warehouse.Lookup(v.Panes); err == nil {
			d.Columns = t.Schema
		}
		docs = append(docs, d)
	}
	return docs
}

func runTables(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	docs := tableDocs()
	if c.format == "json" {
		for i := range docs {
			docs[i].Columns = nil
		}
		return render.JSON(stdout, docs)
	}
	rows := make([][]string, 0, len(docs))
	for _, d := range docs {
		layout := "over " + d.Over
		if d.Kind == "table" {
			layout = "day of " + d.PartitionBy + ", clustered by " + strings.Join(d.ClusteredBy, ", ")
		}
		rows = append(rows, []string{d.Table, d.Kind, fmt.Sprint(len(d.Columns)), layout})
	}
	if err := render.Table(stdout, []string{"table", "kind", "columns", "layout"}, rows, []render.Kind{render.Text, render.Text, render.Int, render.Text}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "(dataset alpinashop_analitica; alpipe schema TABLE shows the columns)")
	return nil
}

func runSchema(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	docs := tableDocs()
	names := make([]string, 0, len(docs))
	for _, d := range docs {
		names = append(names, d.Table)
		if d.Table != pos[0] {
			continue
		}
		if c.format == "json" {
			return render.JSON(stdout, d)
		}
		rows := make([][]string, 0, len(d.Columns))
		for _, col := range d.Columns {
			rows = append(rows, []string{col.Name, string(col.Type), col.Mode, col.Description})
		}
		if d.Kind == "view" {
			fmt.Fprintf(stdout, "%s: a view over %s, %s\n", d.Table, d.Over, d.Description)
		}
		return render.Table(stdout, []string{"column", "type", "mode", "description"}, rows, []render.Kind{render.Text, render.Text, render.Text, render.Text})
	}
	if s := suggest(pos[0], names); s != "" {
		return fmt.Errorf("schema: no table %q: did you mean %q? (alpipe tables lists them)", pos[0], s)
	}
	return fmt.Errorf("schema: no table %q (alpipe tables lists them)", pos[0])
}

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
			Window: d.WindowType, Size: d.WindowSize, Period: d.Period, Gap: d.Gap,
			Key: d.KeyField, Measures: d.Measures,
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

type feedDoc struct {
	Feed        string   `json:"feed"`
	Description string   `json:"description"`
	Objects     string   `json:"objects"`
	Table       string   `json:"table"`
	Encoding    string   `json:"encoding"`
	Header      []string `json:"header"`
	Columns     []colDoc `json:"columns"`
	Unknown     string   `json:"on_unknown_columns"`
	DateFormats []string `json:"date_formats,omitempty"`
	Aggregates  []string `json:"aggregates,omitempty"`
}

type colDoc struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Rules    string `json:"rules,omitempty"`
}

func runContracts(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	feeds, err := contract.Default()
	if err != nil {
		return err
	}
	var docs []feedDoc
	for _, f := range feeds.Feeds() {
		d := feedDoc{
			Feed: f.Name(), Description: f.Description(), Objects: f.ObjectPattern(), Table: f.Table(),
			Encoding: f.Encoding(), Header: f.Header(), Unknown: f.OnUnknownColumns(),
			DateFormats: f.DateFormats(), Aggregates: f.Aggregates(),
		}
		for _, col := range f.Schema() {
			d.Columns = append(d.Columns, colDoc{Name: col.Name, Type: string(col.Type), Required: col.Mode == "REQUIRED", Rules: cmp.Or(f.Rules(col.Name), col.Description)})
		}
		docs = append(docs, d)
	}
	if c.format == "json" {
		return render.JSON(stdout, docs)
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s: %s\n  objects: %s\n  table:   %s   encoding: %s   unknown columns: %s\n", d.Feed, d.Description, d.Objects, d.Table, d.Encoding, d.Unknown)
		if len(d.DateFormats) > 0 {
			fmt.Fprintf(stdout, "  dates:   %s\n", strings.Join(d.DateFormats, ", "))
		}
		if len(d.Aggregates) > 0 {
			fmt.Fprintf(stdout, "  feeds:   %s\n", strings.Join(d.Aggregates, ", "))
		}
		rows := [][]string{{"column", "type", "mode", "rules"}}
		for _, col := range d.Columns {
			mode := ""
			if col.Required {
				mode = "required"
			}
			rows = append(rows, []string{col.Name, col.Type, mode, col.Rules})
		}
		if err := render.Columns(stdout, "  ", rows, nil); err != nil {
			return err
		}
	}
	return nil
}
