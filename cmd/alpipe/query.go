package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// defaultMaxRows is bq's default: a terminal is no place for a table.
const defaultMaxRows = 100

func runQuery(ctx context.Context, c *cmdline, stdout io.Writer) error {
	maxRows := c.Int("max-rows", defaultMaxRows, "rows printed at most (0: all, up to the server's ALPIPE_QUERY_MAX_ROWS); with --output the default is all")
	output := c.outputFlag("write the rows to `FILE` (.csv, .jsonl or .ndjson) as they arrive, replacing it only once the answer is whole")
	if err := c.parse(); err != nil {
		return err
	}
	format := c.format
	if *output == "-" {
		*output = ""
	}
	if *output != "" {
		if !c.isSet("max-rows") {
			*maxRows = 0
		}
		switch {
		case !c.isSet("format"):
			if format = formatOf(*output); format == "" {
				return c.usagef("--output %s: want a file ending in .csv, .jsonl or .ndjson (or name the format with --format csv|jsonl)", *output)
			}
		case format != "csv" && format != "jsonl":
			return c.usagef("--output writes csv or jsonl, not --format %s", format)
		}
	}
	if *maxRows < 0 {
		return c.usagef("--max-rows %d: want 0 (all) or more", *maxRows)
	}
	sql, err := localapi.OneStatement(strings.Join(c.pos, " "))
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if *output != "" {
		return queryToFile(ctx, c.srv, sql, *maxRows, format, *output, stdout)
	}
	var got warehouse.Collect
	var kinds []render.Kind
	more, err := c.srv.QueryTyped(ctx, sql, *maxRows, func(names, types []string) warehouse.RowSink {
		got, kinds = warehouse.Collect{}, render.Kinds(names, types)
		return &got
	})
	if errors.Is(err, localapi.ErrIncomplete) {
		return fmt.Errorf("query: %w (no row printed: they are not the whole answer; add a LIMIT or --max-rows)", err)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	res := got.Result
	if err := render.Result(stdout, res, kinds, format); err != nil {
		return err
	}
	footer := "(" + render.Counted(len(res.Rows), "row", "rows") + ")"
	if more {
		footer = fmt.Sprintf("(first %s rows shown; more exist: --max-rows 0 prints all, or add LIMIT)", render.Thousands(len(res.Rows)))
	}
	if format == "table" {
		fmt.Fprintln(stdout, footer)
	} else if more {
		// csv and json stay machine-readable; the warning goes aside.
		fmt.Fprintln(os.Stderr, "alpipe query: "+footer)
	}
	return nil
}
