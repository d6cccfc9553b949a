package render

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

type Kind int

const (
	Text Kind = iota
	Int
	Decimal // exact NUMERIC/DECIMAL: money, always with its scale
	Float
	Code // an integer that identifies: right-aligned, not grouped
)

// Kinds maps columns' names and warehouse types (DuckDB's DESCRIBE, or
// BigQuery's) to how their values print; an unknown type prints as text.
func Kinds(names, types []string) []Kind {
	k := make([]Kind, len(types))
	for i, typ := range types {
		switch t := strings.ToUpper(typ); {
		case strings.HasPrefix(t, "DECIMAL"), strings.HasPrefix(t, "NUMERIC"), strings.HasPrefix(t, "BIGNUMERIC"):
			k[i] = Decimal
		case strings.Contains(t, "INT") && i < len(names) && identifier.MatchString(names[i]):
			k[i] = Code
		case strings.Contains(t, "INT"):
			k[i] = Int
		case t == "DOUBLE", t == "FLOAT", t == "REAL", t == "FLOAT64":
			k[i] = Float
		}
	}
	return k
}

// identifier matches integer columns that name things rather than count
// them (a generation, a line number, an ID): no thousands separators.
var identifier = regexp.MustCompile(`(?i)(^|_)(id|generation|gen|line|linea|year|anio|code|codigo)$`)

// value is one cell as every format writes it.
func value(v string, k Kind) string {
	if k == Decimal {
		return Scaled(v)
	}
	return v
}

// cell is value with separators in quantities and amounts.
func cell(v string, k Kind) string {
	if v == "NULL" || v == "" {
		return v
	}
	switch k {
	case Int:
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return GroupDigits(v)
		}
	case Decimal:
		return GroupDigits(Scaled(v))
	case Float:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return GroupDigits(strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	return v
}

// writeTable prints rows (the first one a header, if any) in columns two
// blanks apart, each line after indent; the first row's length sets the
// columns, and numbers are right-aligned unless left is set.
func writeTable(w io.Writer, indent string, rows [][]string, kinds []Kind, left bool) error {
	if len(rows) == 0 {
		return nil
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r[:min(len(r), len(width))] {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		r = r[:min(len(r), len(width))]
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case !left && i < len(kinds) && kinds[i] != Text:
				b.WriteString(pad + c)
			case i < len(r)-1:
				b.WriteString(c + pad)
			default:
				b.WriteString(c)
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

func Table(w io.Writer, header []string, rows [][]string, kinds []Kind) error {
	return writeTable(w, "", append([][]string{header}, rows...), kinds, false)
}

// Columns prints rows as Table does, without a header: a section of a report.
func Columns(w io.Writer, indent string, rows [][]string, kinds []Kind) error {
	return writeTable(w, indent, rows, kinds, false)
}

// Answer, an unnamed struct, takes a warehouse.Result as it is without
// render importing warehouse, which imports the aggregations' windows.
type Answer = struct {
	Columns []string
	Rows    [][]string // NULL is "NULL"
}

// Result writes res as
//
//	table  for a terminal: numbers right-aligned, with separators
//	text   every column left-aligned, values as given: a document to compare
//	csv    a header, then the cells
//	json   one array of objects, keys in column order
//	jsonl  one object per line
//
// NULL is "-" in the tables for people. In JSON integers and floats are
// numbers and NUMERIC an exact string.
func Result(w io.Writer, res Answer, kinds []Kind, format string) error {
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
		return writeTable(w, "", append([][]string{res.Columns}, rows...), kinds, left)
	default:
		return fmt.Errorf("unknown format %q: want one of table, text, csv, json, jsonl", format)
	}
}

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

// RowWriter is a warehouse.RowSink writing csv or jsonl as the rows arrive,
// holding one row at a time.
type RowWriter struct {
	bw    *bufio.Writer
	csv   *csv.Writer
	kinds []Kind
	cols  []string
	rows  int64
	enc   *json.Encoder
	cells []string
}

// NewRowWriter writes "csv" or "jsonl" to w; Flush ends it.
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

func (rw *RowWriter) Rows() int64 { return rw.rows }

func (rw *RowWriter) Flush() error {
	if rw.csv != nil {
		rw.csv.Flush()
		if err := rw.csv.Error(); err != nil {
			return err
		}
	}
	return rw.bw.Flush()
}
