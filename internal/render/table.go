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

	"github.com/alpinashop/alpipe/internal/numeric"
)

// Thousands writes an integer with comma grouping: 1800015 -> 1,800,015.
func Thousands[T ~int | ~int64](n T) string {
	return GroupDigits(strconv.FormatInt(int64(n), 10))
}

// Counted writes a count with the noun that agrees with it, with
// thousands separators: 1 pane, 1,200 panes.
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

// GroupDigits groups the integer part of a decimal string in threes.
func GroupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// MoneyScale is the fraction digits money always shows: cents. Every
// NUMERIC column is DECIMAL(38,9) in both warehouses (BigQuery's scale, so
// that no amount is rounded), and the warehouses answer with the shortest
// exact decimal ("179.8"), so no type carries the scale an amount is
// written in; the renderer restores it.
const MoneyScale = 2

// Scaled pads a decimal string to at least MoneyScale fraction digits
// (179.8 -> 179.80, 25 -> 25.00) without rounding away any digit it has
// (1234567.125 stays). Anything else (NULL, "") is returned as it is.
func Scaled(v string) string {
	if v == "" || v == "NULL" {
		return v
	}
	i, f, _ := strings.Cut(v, ".")
	for len(f) < MoneyScale {
		f += "0"
	}
	return i + "." + f
}

// Money is an exact amount with its scale: 179.80, never 179.8.
func Money(d numeric.Dec) string { return Scaled(d.String()) }

// Kind is how a column's values print.
type Kind int

const (
	Text Kind = iota
	Int
	Decimal // exact NUMERIC/DECIMAL: money, always with its scale
	Float
	Code // an integer that identifies: right-aligned, not grouped
)

// KindOf maps a column's name and warehouse type (DuckDB's DESCRIBE, or
// BigQuery's) to how its values print; an unknown type prints as text.
func KindOf(name, typ string) Kind {
	t := strings.ToUpper(typ)
	switch {
	case strings.HasPrefix(t, "DECIMAL"), strings.HasPrefix(t, "NUMERIC"), strings.HasPrefix(t, "BIGNUMERIC"):
		return Decimal
	case strings.Contains(t, "INT"):
		if identifier.MatchString(name) {
			return Code
		}
		return Int
	case t == "DOUBLE", t == "FLOAT", t == "REAL", t == "FLOAT64":
		return Float
	}
	return Text
}

// Kinds is KindOf for each column; nil types (the warehouse could not say)
// are all text.
func Kinds(names, types []string) []Kind {
	k := make([]Kind, len(types))
	for i, t := range types {
		name := ""
		if i < len(names) {
			name = names[i]
		}
		k[i] = KindOf(name, t)
	}
	return k
}

// identifier matches integer columns that name things rather than count
// them (a generation, a line number, an ID): no thousands separators.
var identifier = regexp.MustCompile(`(?i)(^|_)(id|generation|gen|line|linea|year|anio|code|codigo)$`)

// value is one cell as every format writes it: money with its scale,
// anything else as the warehouse gave it.
func value(v string, k Kind) string {
	if k == Decimal {
		return Scaled(v)
	}
	return v
}

// cell renders one value for a text table: value, with separators in
// quantities and amounts.
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

// Table prints rows under a header for a terminal: columns two blanks
// apart, those whose kind is not Text right-aligned.
func Table(w io.Writer, header []string, rows [][]string, kinds []Kind) error {
	return writeTable(w, "", append([][]string{header}, rows...), kinds, false)
}

// Columns prints rows as Table does, without a header, each line after
// indent: a section of a report.
func Columns(w io.Writer, indent string, rows [][]string, kinds []Kind) error {
	return writeTable(w, indent, rows, kinds, false)
}

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

// Answer is a query's answer as warehouse.Result holds it. Being an
// unnamed struct, it takes a warehouse.Result as it is without render
// importing warehouse, which imports the aggregations and their windows.
type Answer = struct {
	Columns []string
	Rows    [][]string // NULL is "NULL"
}

// Result writes res in format; kinds say how each column prints (nil or
// too short: as text).
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
		return writeTable(w, "", append([][]string{res.Columns}, rows...), kinds, left)
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
