package render

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Formats lists what Result writes:
//
//	table  a text table for a terminal: numbers right-aligned, quantities
//	       and amounts with separators
//	text   the same table with every column left-aligned and the values as
//	       the warehouse gives them: a document to compare (the demo's)
//	csv    a header, then the cells
//	json   one array of objects, keys in column order
//	jsonl  one object per line
//
// NULL is "-" in the tables for people, NULL in csv and null in JSON;
// in every format money has its scale
// (179.80), and in JSON integers and floats are numbers and NUMERIC an
// exact string.
var Formats = []string{"table", "text", "csv", "json", "jsonl"}

// Result writes res in format; kinds say how each column prints (nil or
// too short: as text).
func Result(w io.Writer, res warehouse.Result, kinds []Kind, format string) error {
	if len(kinds) != len(res.Columns) {
		kinds = make([]Kind, len(res.Columns))
	}
	switch format {
	case "csv", "jsonl":
		rw := NewRowWriter(w, format, kinds)
		if err := rw.Columns(res.Columns); err != nil {
			return err
		}
		for _, r := range res.Rows {
			if err := rw.Row(r); err != nil {
				return err
			}
		}
		return rw.Flush()
	case "json":
		out := make([]any, 0, len(res.Rows))
		for _, r := range res.Rows {
			out = append(out, row(res.Columns, r, kinds))
		}
		return JSON(w, out)
	case "table", "text":
		left := format == "text"
		rows := make([][]string, len(res.Rows))
		for i, r := range res.Rows {
			rows[i] = make([]string, len(r))
			for j, v := range r {
				if v == "NULL" {
					// A person reads an absent value as a dash, as status
					// prints one; csv and JSON keep NULL and null.
					rows[i][j] = "-"
					continue
				}
				if left {
					rows[i][j] = value(v, kinds[j])
				} else {
					rows[i][j] = cell(v, kinds[j])
				}
			}
		}
		return writeTable(w, res.Columns, rows, kinds, left)
	default:
		return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
}

// row is one row as a JSON object whose keys keep the column order.
func row(columns, cells []string, kinds []Kind) object {
	o := make(object, len(cells))
	for i, c := range cells {
		o[i] = member{columns[i], jsonValue(c, kinds[i])}
	}
	return o
}

func jsonValue(v string, k Kind) any {
	if v == "NULL" {
		return nil
	}
	if k == Int || k == Float || k == Code {
		n := json.Number(v)
		if _, err := n.Float64(); err == nil {
			return n
		}
	}
	return value(v, k)
}

// RowWriter is a warehouse.RowSink writing csv (a header, then the cells)
// or jsonl (one object per row, typed as json types them) as the rows
// arrive: it holds one row at a time, whatever the answer's size.
type RowWriter struct {
	bw    *bufio.Writer
	csv   *csv.Writer
	kinds []Kind
	cols  []string
	rows  int64
	enc   *json.Encoder
	cells []string
}

// NewRowWriter writes format ("csv" or "jsonl") to w; Flush ends it.
func NewRowWriter(w io.Writer, format string, kinds []Kind) *RowWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	rw := &RowWriter{bw: bw, kinds: kinds}
	if format == "csv" {
		rw.csv = csv.NewWriter(bw)
	} else {
		// As JSON: "&" and "<" stay themselves in a data file.
		rw.enc = json.NewEncoder(bw)
		rw.enc.SetEscapeHTML(false)
	}
	return rw
}

func (rw *RowWriter) Columns(names []string) error {
	rw.cols = names
	if len(rw.kinds) != len(names) {
		rw.kinds = make([]Kind, len(names))
	}
	if rw.csv != nil {
		return rw.csv.Write(names)
	}
	return nil
}

func (rw *RowWriter) Row(cells []string) error {
	rw.rows++
	if rw.csv != nil {
		rw.cells = rw.cells[:0]
		for i, c := range cells {
			rw.cells = append(rw.cells, value(c, rw.kinds[i]))
		}
		return rw.csv.Write(rw.cells)
	}
	return rw.enc.Encode(row(rw.cols, cells, rw.kinds))
}

// Rows is how many rows were written.
func (rw *RowWriter) Rows() int64 { return rw.rows }

// Flush writes what is buffered.
func (rw *RowWriter) Flush() error {
	if rw.csv != nil {
		rw.csv.Flush()
		if err := rw.csv.Error(); err != nil {
			return err
		}
	}
	return rw.bw.Flush()
}
