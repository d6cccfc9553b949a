// Package render is the one renderer of the CLI, the demo and the engines'
// lines, so that a value reads the same wherever it appears: money always
// with its scale (179.80, never 179.8). It imports no engine (stream,
// window), so that the engines can print with it.
package render

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// When writes t for people, in UTC and saying so; the zero time, which
// means "never" or "unknown" wherever it is kept, is "-".
func When(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Duration is the one way a duration reads for people (the dashboard's
// assets/dashboard.js writes the same): 262d 13h, 2h05m, 4m05s, 42s, 0s.
func Duration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	sec := int64(d.Round(time.Second) / time.Second)
	days, h, m, s := sec/86400, sec%86400/3600, sec%3600/60, sec%60
	switch {
	case days > 0:
		return fmt.Sprintf("%s%dd %dh", sign, days, h)
	case h > 0:
		return fmt.Sprintf("%s%dh%02dm", sign, h, m)
	case m > 0:
		return fmt.Sprintf("%s%dm%02ds", sign, m, s)
	}
	return fmt.Sprintf("%s%ds", sign, s)
}

// Short writes a duration as the declarations do: 1h, not Go's 1h0m0s.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// JSON writes v as the one JSON style of every --format json: one indented
// document; keys in snake_case and in declaration order; times in RFC 3339
// (UTC); durations as seconds under a key ending _seconds; NUMERIC an exact
// decimal string with its scale ("179.80"). A core type without json tags
// cannot leak Go names or nanoseconds through it.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(styled(reflect.ValueOf(v))); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	timeType     = reflect.TypeOf(time.Time{})
	durationType = reflect.TypeOf(time.Duration(0))
	decType      = reflect.TypeOf(numeric.Dec{})
	rawType      = reflect.TypeOf(json.RawMessage(nil))
	objectType   = reflect.TypeOf(object(nil))
)

func styled(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Type() {
	case timeType:
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	case durationType:
		return v.Interface().(time.Duration).Seconds()
	case decType:
		return Money(v.Interface().(numeric.Dec))
	case rawType, objectType:
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return styled(v.Elem())
	case reflect.Struct:
		o := object{}
		addFields(&o, v)
		return o
	case reflect.Map:
		if v.IsNil() {
			return map[string]any{}
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = styled(it.Value())
		}
		return m
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = styled(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

func addFields(o *object, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			addFields(o, fv)
			continue
		}
		if (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")) && fv.IsZero() {
			continue
		}
		name = cmp.Or(name, snake(f.Name))
		if f.Type == durationType && !strings.HasSuffix(name, "_seconds") {
			name += "_seconds"
		}
		*o = append(*o, member{name, styled(fv)})
	}
}

// snake turns a Go field name into snake_case: PedidoID -> pedido_id,
// WatermarkBefore -> watermark_before, CRC32C -> crc32c.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || (unicode.IsUpper(prev) || unicode.IsDigit(prev)) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func Thousands[T ~int | ~int64](n T) string {
	return GroupDigits(strconv.FormatInt(int64(n), 10))
}

// Counted: 1 pane, 1,200 panes.
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

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

// Scaled pads a decimal string to cents (179.8 -> 179.80) without rounding
// away a digit (1234567.125 stays). Every NUMERIC column is DECIMAL(38,9) in
// both warehouses, which answer with the shortest exact decimal ("179.8"):
// no type carries the scale an amount is written in.
func Scaled(v string) string {
	if v == "" || v == "NULL" {
		return v
	}
	i, f, _ := strings.Cut(v, ".")
	return i + "." + f + strings.Repeat("0", max(0, 2-len(f)))
}

func Money(d numeric.Dec) string { return Scaled(d.String()) }

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
