package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// defaultMaxRows is bq's default: a terminal is no place for a table.
const defaultMaxRows = 100

func runQuery(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	format := fs.String("format", "table", "output: table, csv, json or jsonl (one JSON object per row)")
	maxRows := fs.Int("max-rows", defaultMaxRows, "rows printed at most (0: all, up to the server's ALPIPE_QUERY_MAX_ROWS); with --output the default is all")
	output := fs.String("output", "", "write the rows to this file as they arrive (csv or jsonl), replacing it only once the answer is whole")
	server := serverFlag(fs)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New(`query: want SQL, e.g. alpipe query "SELECT * FROM ventas_diarias_sku LIMIT 10"`)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *output != "" {
		if !set["format"] {
			*format = formatOf(*output)
		}
		if !set["max-rows"] {
			*maxRows = 0
		}
		if err := checkFormat("query --output", *format, "csv", "jsonl"); err != nil {
			return err
		}
	} else if err := checkFormat("query", *format, "table", "csv", "json", "jsonl"); err != nil {
		return err
	}
	if *maxRows < 0 {
		return fmt.Errorf("query: --max-rows %d: want 0 (all) or more", *maxRows)
	}
	sql, err := localapi.OneStatement(strings.Join(pos, " "))
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	srv := client.Server{URL: *server}
	if *output != "" {
		return queryToFile(ctx, srv, sql, *maxRows, *format, *output, stdout)
	}
	var c warehouse.Collect
	var kinds []render.Kind
	more, err := srv.QueryTyped(ctx, sql, *maxRows, func(names, types []string) warehouse.RowSink {
		c, kinds = warehouse.Collect{}, render.Kinds(names, types)
		return &c
	})
	if errors.Is(err, localapi.ErrIncomplete) {
		return fmt.Errorf("query: %w (no row printed: they are not the whole answer; add a LIMIT or --max-rows)", err)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	res := c.Result
	if err := render.Result(stdout, res, kinds, *format); err != nil {
		return err
	}
	footer := fmt.Sprintf("(%s rows)", render.Thousands(len(res.Rows)))
	if len(res.Rows) == 1 {
		footer = "(1 row)"
	}
	if more {
		footer = fmt.Sprintf("(first %s rows shown; more exist: --max-rows 0 prints all, or add LIMIT)", render.Thousands(len(res.Rows)))
	}
	if *format == "table" {
		fmt.Fprintln(stdout, footer)
	} else if more {
		// csv and json stay machine-readable; the warning goes aside.
		fmt.Fprintln(os.Stderr, "alpipe query: "+footer)
	}
	return nil
}
