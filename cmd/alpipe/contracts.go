package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/render"
)

// feedDoc is one feed as `contracts --format json` prints it.
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
		rows := [][]string{}
		for _, col := range d.Columns {
			req := ""
			if col.Required {
				req = "required"
			}
			rows = append(rows, []string{col.Name, col.Type, req, col.Rules})
		}
		var b strings.Builder
		if err := render.Table(&b, []string{"column", "type", "mode", "rules"}, rows, nil); err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			fmt.Fprintln(stdout, "  "+l)
		}
	}
	return nil
}
