package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
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
	sql, err := client.OneStatement(strings.Join(pos, " "))
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	srv := client.Server{URL: *server}
	if *output != "" {
		return queryToFile(ctx, srv, sql, *maxRows, *format, *output, stdout)
	}
	var c warehouse.Collect
	kinds, more, err := runLimited(ctx, srv, sql, *maxRows, func([]kind) warehouse.RowSink {
		c = warehouse.Collect{}
		return &c
	})
	if errors.Is(err, client.ErrIncomplete) {
		return fmt.Errorf("query: %w (no row printed: they are not the whole answer; add a LIMIT or --max-rows)", err)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	res := c.Result
	if len(kinds) != len(res.Columns) {
		kinds = make([]kind, len(res.Columns))
	}
	if err := writeResult(stdout, res, kinds, *format); err != nil {
		return err
	}
	footer := fmt.Sprintf("(%s rows)", thousands(len(res.Rows)))
	if len(res.Rows) == 1 {
		footer = "(1 row)"
	}
	if more {
		footer = fmt.Sprintf("(first %s rows shown; more exist: --max-rows 0 prints all, or add LIMIT)", thousands(len(res.Rows)))
	}
	if *format == "table" {
		fmt.Fprintln(stdout, footer)
	} else if more {
		// csv and json stay machine-readable; the warning goes aside.
		fmt.Fprintln(os.Stderr, "alpipe query: "+footer)
	}
	return nil
}

var selectLike = regexp.MustCompile(`(?is)^\s*(select|with|from|values|table)\b`)

// sinkError is a failure of the local side of an answer (the disk): no
// reason to run the query again.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

// runLimited runs sql (one statement) into the sink newSink makes, with at
// most max rows (0: as many as the server's cap allows), and reports
// whether more exist. A query is wrapped in a LIMIT so that the engine can
// stop early (a top-N instead of a sort); its column types come from
// DESCRIBE so that numbers print as numbers. Either step falls back quietly
// to the plain statement (DESCRIBE, SHOW ...); the fallback makes a new
// sink, and happens only while no row has reached one. The server bounds
// every answer: one it stopped (a cap, its timeout) is an error wrapping
// client.ErrIncomplete.
func runLimited(ctx context.Context, srv client.Server, sql string, max int, newSink func([]kind) warehouse.RowSink) ([]kind, bool, error) {
	var kinds []kind
	if selectLike.MatchString(sql) {
		if d, err := srv.Query(ctx, "DESCRIBE "+sql); err == nil {
			kinds = describeKinds(d)
		} else if errors.Is(err, client.ErrUnreachable) {
			return nil, false, err
		}
	}
	run := func(q string) (bool, error) {
		return srv.QueryRows(ctx, q, int64(max), newSink(kinds))
	}
	var more bool
	var err error
	if max > 0 && selectLike.MatchString(sql) {
		// The newlines keep a trailing comment from swallowing the wrap.
		more, err = run(fmt.Sprintf("SELECT * FROM (\n%s\n) AS q LIMIT %d", sql, max+1))
		var se *sinkError
		if err != nil && !errors.Is(err, client.ErrUnreachable) && !errors.Is(err, client.ErrIncomplete) && !errors.As(err, &se) {
			more, err = run(sql)
		}
	} else {
		more, err = run(sql)
	}
	if err != nil {
		return nil, false, err
	}
	return kinds, more, nil
}

func describeKinds(d warehouse.Result) []kind {
	ni, ti := -1, -1
	for i, c := range d.Columns {
		switch c {
		case "column_name":
			ni = i
		case "column_type":
			ti = i
		}
	}
	if ti < 0 {
		return nil
	}
	kinds := make([]kind, len(d.Rows))
	for i, r := range d.Rows {
		kinds[i] = kindOf(r[ti])
		if kinds[i] == kindInt && ni >= 0 && identifier.MatchString(r[ni]) {
			kinds[i] = kindCode
		}
	}
	return kinds
}

// identifier matches integer columns that name things rather than count
// them (a generation, a line number, an ID): no thousands separators.
var identifier = regexp.MustCompile(`(?i)(^|_)(id|generation|gen|line|linea|year|anio|code|codigo)$`)

// writeResult renders a result as "table", "csv", "json" or "jsonl". JSON is an
// array of objects whose keys keep the column order; integers and floats
// are numbers, NUMERIC an exact string, NULL null.
func writeResult(w io.Writer, res warehouse.Result, kinds []kind, format string) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(res.Columns); err != nil {
			return err
		}
		if err := cw.WriteAll(res.Rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	case "jsonl":
		rw := newRowWriter(w, "jsonl", kinds)
		if err := rw.Columns(res.Columns); err != nil {
			return err
		}
		for _, r := range res.Rows {
			if err := rw.Row(r); err != nil {
				return err
			}
		}
		return rw.flush()
	case "json":
		out := make([]any, 0, len(res.Rows))
		for _, r := range res.Rows {
			o := make(object, 0, len(r))
			for i, c := range res.Columns {
				o = append(o, member{c, jsonValue(r[i], kinds[i])})
			}
			out = append(out, o)
		}
		return printJSON(w, out)
	default:
		rows := make([][]string, len(res.Rows))
		for i, r := range res.Rows {
			rows[i] = make([]string, len(r))
			for j, v := range r {
				rows[i][j] = cell(v, kinds[j])
			}
		}
		return writeTable(w, res.Columns, rows, kinds)
	}
}

func jsonValue(v string, k kind) any {
	if v == "NULL" {
		return nil
	}
	if k == kindInt || k == kindFloat || k == kindCode {
		var n json.Number = json.Number(v)
		if _, err := n.Float64(); err == nil {
			return n
		}
	}
	return v
}
