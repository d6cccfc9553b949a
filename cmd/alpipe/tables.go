package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// tables and schema answer "what can I query?" without a server: the
// schemas are the embedded files Terraform also creates the tables from,
// so what they print is what both warehouses hold.

// tableDoc is one table as `tables --format json` and `schema --format
// json` print it.
type tableDoc struct {
	Table       string            `json:"table"`
	Kind        string            `json:"kind"`
	PartitionBy string            `json:"partitioned_by_day_of,omitempty"`
	ClusteredBy []string          `json:"clustered_by,omitempty"`
	Over        string            `json:"over,omitempty"`
	Columns     []warehouse.Field `json:"columns,omitempty"`
	Description string            `json:"description,omitempty"`
}

// tableDocs are the tables, then the views, one per declared aggregation:
// a view's columns are those of the table it reads.
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
