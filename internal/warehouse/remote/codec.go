package remote

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// kind is a column type as a small integer: switching on warehouse.Type
// compares strings, once per cell.
type kind uint8

const (
	kindString kind = iota
	kindInt64
	kindNumeric
	kindDate
	kindTimestamp
)

// codec turns the rows of one table into lines of the wire format and back
// (see the package documentation). It is hand-written rather than built on
// encoding/json because a load streams every row of a file through it twice,
// and because a generic decoder would read integers through float64.
type codec struct {
	table warehouse.Table
	kinds []kind
}

func newCodec(t warehouse.Table) (*codec, error) {
	c := &codec{table: t, kinds: make([]kind, len(t.Schema))}
	for i, f := range t.Schema {
		switch f.Type {
		case warehouse.String:
			c.kinds[i] = kindString
		case warehouse.Int64:
			c.kinds[i] = kindInt64
		case warehouse.Numeric:
			c.kinds[i] = kindNumeric
		case warehouse.Date:
			c.kinds[i] = kindDate
		case warehouse.Timestamp:
			c.kinds[i] = kindTimestamp
		default:
			return nil, fmt.Errorf("table %s column %s: unsupported type %q", t.Name, f.Name, f.Type)
		}
	}
	return c, nil
}

// The instants a TIMESTAMP can hold on the wire: int64 microseconds, which
// is also DuckDB's own range. Outside it UnixMicro would silently wrap.
var (
	minTime = time.UnixMicro(math.MinInt64)
	maxTime = time.UnixMicro(math.MaxInt64)
)

// appendRow appends row as one line, newline included. A row of the wrong
// width is refused here: the receiver could not tell which value is which
// column. NULL in a REQUIRED column is left for the backend to refuse, so
// the remote adapter fails exactly where the backend does.
func (c *codec) appendRow(dst []byte, row []warehouse.Value) ([]byte, error) {
	dst = append(dst, '[')
	dst, err := c.appendCells(dst, row)
	if err != nil {
		return dst, err
	}
	return append(dst, ']', '\n'), nil
}

// appendIDRow is appendRow for a warehouse.Row: its ID comes first.
func (c *codec) appendIDRow(dst []byte, r warehouse.Row) ([]byte, error) {
	dst = append(dst, '[')
	dst = appendString(dst, r.ID)
	if len(r.Values) > 0 || len(c.kinds) > 0 {
		dst = append(dst, ',')
	}
	dst, err := c.appendCells(dst, r.Values)
	if err != nil {
		return dst, err
	}
	return append(dst, ']', '\n'), nil
}

func (c *codec) appendCells(dst []byte, row []warehouse.Value) ([]byte, error) {
	if len(row) != len(c.kinds) {
		return dst, fmt.Errorf("%d values for the %d columns of %s", len(row), len(c.kinds), c.table.Name)
	}
	for i := range row {
		if i > 0 {
			dst = append(dst, ',')
		}
		v := &row[i]
		if v.Null {
			dst = append(dst, "null"...)
			continue
		}
		switch c.kinds[i] {
		case kindString:
			dst = appendString(dst, v.Str)
		case kindInt64:
			dst = strconv.AppendInt(dst, v.Int, 10)
		case kindNumeric:
			dst = append(dst, '"')
			dst = v.Dec.AppendText(dst)
			dst = append(dst, '"')
		case kindDate:
			dst = strconv.AppendInt(dst, int64(v.Days), 10)
		case kindTimestamp:
			if v.Time.Before(minTime) || v.Time.After(maxTime) {
				return dst, fmt.Errorf("column %s: timestamp %s outside the range of int64 microseconds", c.table.Schema[i].Name, v.Time)
			}
			dst = strconv.AppendInt(dst, v.Time.UnixMicro(), 10)
		}
	}
	return dst, nil
}

// appendEnd appends the line that closes a body of n rows.
func appendEnd(dst []byte, n int64) []byte {
	dst = append(dst, `{"end":`...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '}', '\n')
}

// parseEnd reads an end line (without its newline).
func parseEnd(line []byte) (int64, error) {
	const prefix = `{"end":`
	if len(line) < len(prefix)+2 || string(line[:len(prefix)]) != prefix || line[len(line)-1] != '}' {
		return 0, fmt.Errorf("malformed end line %.40q", line)
	}
	n, used, err := parseInt(line[len(prefix) : len(line)-1])
	if err != nil || used != len(line)-len(prefix)-1 || n < 0 {
		return 0, fmt.Errorf("malformed end line %.40q", line)
	}
	return n, nil
}

// appendString appends s as a JSON string when it is valid UTF-8, and as
// {"base64":"..."} otherwise: JSON cannot carry other bytes, and replacing
// them (as encoding/json does) would change the value in transit.
func appendString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		dst = append(dst, `{"base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, []byte(s))
		return append(dst, '"', '}')
	}
	// Valid UTF-8 is written exactly as the BigQuery load files write it.
	return warehouse.AppendJSONString(dst, s)
}

// decodeRow parses one line (without its newline) into dst, which has one
// Value per column. With withID the line starts with the row's ID.
func (c *codec) decodeRow(line []byte, dst []warehouse.Value, withID bool) (id string, err error) {
	p := parser{b: line}
	if !p.consume('[') {
		return "", p.fail("a row must be a JSON array")
	}
	if withID {
		b, err := p.stringCell()
		if err != nil {
			return "", fmt.Errorf("row ID: %w", err)
		}
		id = string(b)
		if len(c.kinds) > 0 && !p.consume(',') {
			return "", p.fail("expected ',' after the row ID")
		}
	}
	for i, k := range c.kinds {
		if i > 0 && !p.consume(',') {
			if p.peek() == ']' {
				return "", fmt.Errorf("%d values for the %d columns of %s", i, len(c.kinds), c.table.Name)
			}
			return "", p.fail("expected ','")
		}
		if err := p.cell(k, &dst[i]); err != nil {
			return "", fmt.Errorf("column %s: %w", c.table.Schema[i].Name, err)
		}
	}
	if !p.consume(']') {
		if p.peek() == ',' {
			return "", fmt.Errorf("more values than the %d columns of %s", len(c.kinds), c.table.Name)
		}
		return "", p.fail("expected ']'")
	}
	if p.i != len(p.b) {
		return "", p.fail("trailing bytes after the row")
	}
	return id, nil
}

// parser walks one line of the wire format.
type parser struct {
	b []byte
	i int
}

func (p *parser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *parser) consume(c byte) bool {
	if p.peek() == c && p.i < len(p.b) {
		p.i++
		return true
	}
	return false
}

func (p *parser) fail(msg string) error {
	return fmt.Errorf("%s at byte %d", msg, p.i)
}

// cell reads one value of kind k into v. v holds the previous row's value
// of the column (the row buffer is reused): a string equal to it is kept
// rather than allocated again, which spares most strings of a file, whose
// lineage, countries and SKUs repeat from row to row.
func (p *parser) cell(k kind, v *warehouse.Value) error {
	if p.i+4 <= len(p.b) && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		*v = warehouse.NullValue()
		return nil
	}
	switch k {
	case kindString:
		b, err := p.stringCell()
		if err != nil {
			return err
		}
		if v.Null || string(b) != v.Str {
			*v = warehouse.StringValue(string(b))
		}
		return nil
	case kindNumeric:
		b, err := p.str()
		if err != nil {
			return err
		}
		d, err := numeric.ParseBytes(b, false)
		if err != nil {
			return fmt.Errorf("NUMERIC %q: %w", b, err)
		}
		*v = warehouse.DecValue(d)
		return nil
	}
	n, used, err := parseInt(p.b[p.i:])
	if err != nil {
		return p.fail(err.Error())
	}
	p.i += used
	switch k {
	case kindInt64:
		*v = warehouse.IntValue(n)
	case kindDate:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return fmt.Errorf("DATE %d days is out of range", n)
		}
		*v = warehouse.DateValue(int32(n))
	default: // kindTimestamp
		*v = warehouse.TimeValue(time.UnixMicro(n))
	}
	return nil
}

// stringCell reads a STRING cell: a JSON string or {"base64":"..."}.
func (p *parser) stringCell() ([]byte, error) {
	if p.peek() != '{' {
		return p.str()
	}
	const prefix = `{"base64":`
	if !(len(p.b)-p.i >= len(prefix) && string(p.b[p.i:p.i+len(prefix)]) == prefix) {
		return nil, p.fail(`expected a string or {"base64":...}`)
	}
	p.i += len(prefix)
	enc, err := p.str()
	if err != nil {
		return nil, err
	}
	if !p.consume('}') {
		return nil, p.fail("expected '}'")
	}
	out, err := base64.StdEncoding.AppendDecode(nil, enc)
	if err != nil {
		return nil, fmt.Errorf("base64 string: %w", err)
	}
	return out, nil
}

// str reads a JSON string. Without escapes the result aliases the line.
func (p *parser) str() ([]byte, error) {
	if !p.consume('"') {
		return nil, p.fail("expected a string")
	}
	start := p.i
	escaped := false
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			if !escaped {
				return p.b[start : p.i-1], nil
			}
			var s string
			if err := json.Unmarshal(p.b[start-1:p.i], &s); err != nil {
				return nil, fmt.Errorf("string at byte %d: %w", start-1, err)
			}
			return []byte(s), nil
		case c == '\\':
			escaped = true
			p.i++ // the escaped byte cannot end the string
		case c < 0x20:
			return nil, p.fail("control character in a string")
		}
	}
	return nil, p.fail("unterminated string")
}

// parseInt reads a JSON integer at the start of b exactly (encoding/json
// would go through float64) and returns it with the bytes it used.
func parseInt(b []byte) (int64, int, error) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, 0, errors.New("integer out of range")
		}
		u = u*10 + d
	}
	if i == start {
		return 0, 0, errors.New("expected an integer")
	}
	if neg {
		if u > 1<<63 {
			return 0, 0, errors.New("integer out of range")
		}
		return -int64(u), i, nil //nolint:gosec // range checked: -(1<<63) wraps to MinInt64
	}
	if u > math.MaxInt64 {
		return 0, 0, errors.New("integer out of range")
	}
	return int64(u), i, nil
}
