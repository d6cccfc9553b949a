package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
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

// engineClass is DuckDB's "Parser Error: " and the like, after the
// warehouse's own "query: ".
var engineClass = regexp.MustCompile(`^(query: )?([A-Z][a-zA-Z]* )?Error: `)

// personal turns a query the server refused into the reason on one line
// and the SQL line and caret the engine showed under it.
func personal(err error) error {
	var qe *client.QueryError
	if !errors.As(err, &qe) {
		return err
	}
	msg := strings.TrimPrefix(qe.Msg, "query: ")
	msg = engineClass.ReplaceAllString(msg, "")
	first, rest, _ := strings.Cut(msg, "\n")
	var detail []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimSpace(l) != "" {
			detail = append(detail, "  "+strings.TrimRight(l, " \t\r"))
		}
	}
	return &detailError{msg: strings.TrimSpace(first), detail: strings.Join(detail, "\n"), cause: err}
}

// formatOf is "" for an extension the CLI does not write: .parquet would
// otherwise get CSV silently.
func formatOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".csv":
		return "csv"
	case ".jsonl", ".ndjson":
		return "jsonl"
	}
	return ""
}

// queryToFile streams the answer into a temporary file beside file and
// renames it over file only when the answer is whole, so that a stopped or
// cut answer (a cap, the timeout, Ctrl-C, a full disk) leaves no file and
// never a shorter one that looks complete. One row is held at a time.
func queryToFile(ctx context.Context, srv client.Server, sql string, max int, format, file string, stdout io.Writer) (err error) {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.part")
	if err != nil {
		return fmt.Errorf("query: --output: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	var rw *render.RowWriter
	more, err := srv.QueryTyped(ctx, sql, max, func(names, types []string) warehouse.RowSink {
		rw = render.NewRowWriter(f, format, render.Kinds(names, types))
		return rw
	})
	if errors.Is(err, localapi.ErrIncomplete) {
		return fmt.Errorf("query: %w (%s not written: the rows are not the whole answer; add a LIMIT or --max-rows)", err, file)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	// CreateTemp's 0600 is for the unfinished file only.
	chmod := func() error { return os.Chmod(tmp, 0o644) }
	rename := func() error { return os.Rename(tmp, file) }
	for _, step := range []func() error{rw.Flush, f.Sync, f.Close, chmod, rename} {
		if err := step(); err != nil {
			return fmt.Errorf("query: write %s: %w", file, err)
		}
	}
	n := render.Counted(int(rw.Rows()), "row", "rows")
	fmt.Fprintf(stdout, "wrote %s to %s\n", n, file)
	if more {
		fmt.Fprintf(stdout, "(the first %s; more exist: --max-rows 0 writes all, or add LIMIT)\n", n)
	}
	return nil
}
