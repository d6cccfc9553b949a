package bigquery

import (
	"fmt"
	"strconv"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// rowEncoder writes rows of one table as JSON objects in the form BigQuery's
// JSON load and insertAll accept without loss:
//
//   - NUMERIC as a decimal string ("179.8"): a JSON number would be read as a
//     double by many parsers, and money must stay exact;
//   - INT64 as a JSON number inside ±(2^53-1), as a string outside it, as the
//     load documentation asks, so no reader rounds it through a double;
//   - DATE as "YYYY-MM-DD"; TIMESTAMP as RFC 3339 in UTC with exactly six
//     fractional digits (BigQuery keeps microseconds; finer digits would be
//     rejected or silently truncated, so the truncation happens here);
//   - NULL as an absent key, which BigQuery reads as NULL.
//
// It appends to a caller's buffer and allocates nothing per row. A cell
// equal to its column's previous one is copied from that one's JSON once the
// value has repeated: a file's lineage (object, generation, ingestion time)
// is the same on every row, and a time formatted or a long string escaped
// costs more than the rest of the row, while a column that changes on every
// row (an order ID, a line number) would only pay for keeping the copy.
type rowEncoder struct {
	table warehouse.Table
	cols  []encColumn
}

type encColumn struct {
	key      []byte // `,"name":`, quoted once; a row's first comma becomes its '{'
	typ      warehouse.Type
	required bool
	// last is the column's previous non-NULL value (seen: there is one);
	// cell is its key and JSON, kept once last repeated (empty: not kept).
	last warehouse.Value
	seen bool
	cell []byte
}

func newRowEncoder(t warehouse.Table) *rowEncoder {
	e := &rowEncoder{table: t, cols: make([]encColumn, len(t.Schema))}
	for i, f := range t.Schema {
		k := warehouse.AppendJSONString([]byte{','}, f.Name)
		e.cols[i] = encColumn{key: append(k, ':'), typ: f.Type, required: f.Required()}
	}
	return e
}

// maxExactJSONInt is 2^53-1, the largest integer every JSON reader (an
// IEEE double) holds exactly.
const maxExactJSONInt = 1<<53 - 1

// appendRow appends row as one JSON object (no newline). A row of the wrong
// width or a NULL in a REQUIRED column is refused here, naming the column,
// rather than failing the whole load job later with a less precise reason.
func (e *rowEncoder) appendRow(dst []byte, row []warehouse.Value) ([]byte, error) {
	if len(row) != len(e.cols) {
		return dst, fmt.Errorf("row has %d values, table %s has %d columns", len(row), e.table.Name, len(e.cols))
	}
	start := len(dst)
	for i := range e.cols {
		c, v := &e.cols[i], &row[i]
		if v.Null {
			if c.required {
				return dst, fmt.Errorf("column %s is REQUIRED but the value is NULL", e.table.Schema[i].Name)
			}
			continue
		}
		same := c.seen && sameValue(c.typ, &c.last, v)
		if same && len(c.cell) > 0 {
			dst = append(dst, c.cell...)
			continue
		}
		at := len(dst)
		dst = append(dst, c.key...)
		var err error
		dst, err = appendValue(dst, c.typ, v)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", e.table.Schema[i].Name, err)
		}
		if same {
			c.cell = append(c.cell[:0], dst[at:]...)
		} else {
			c.keep(v)
		}
	}
	if len(dst) == start {
		return append(dst, '{', '}'), nil
	}
	dst[start] = '{'
	return append(dst, '}'), nil
}

// sameValue reports whether two non-NULL values of a column of type typ
// encode alike.
func sameValue(typ warehouse.Type, a, b *warehouse.Value) bool {
	switch typ {
	case warehouse.String:
		return a.Str == b.Str
	case warehouse.Int64:
		return a.Int == b.Int
	case warehouse.Numeric:
		return a.Dec == b.Dec
	case warehouse.Date:
		return a.Days == b.Days
	case warehouse.Timestamp:
		return a.Time.Equal(b.Time)
	}
	return false
}

// keep makes v the column's last value, copying only the field its type
// uses (what sameValue compares), and drops the cell of the previous one.
func (c *encColumn) keep(v *warehouse.Value) {
	switch c.typ {
	case warehouse.String:
		c.last.Str = v.Str
	case warehouse.Int64:
		c.last.Int = v.Int
	case warehouse.Numeric:
		c.last.Dec = v.Dec
	case warehouse.Date:
		c.last.Days = v.Days
	case warehouse.Timestamp:
		c.last.Time = v.Time
	}
	c.seen, c.cell = true, c.cell[:0]
}

func appendInt(dst []byte, n int64) []byte {
	if n >= -maxExactJSONInt && n <= maxExactJSONInt {
		return strconv.AppendInt(dst, n, 10)
	}
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '"')
}

// appendValue appends one non-NULL value as JSON.
func appendValue(dst []byte, typ warehouse.Type, v *warehouse.Value) ([]byte, error) {
	switch typ {
	case warehouse.String:
		return appendString(dst, v.Str), nil
	case warehouse.Int64:
		return appendInt(dst, v.Int), nil
	case warehouse.Numeric:
		dst = append(dst, '"')
		dst = v.Dec.AppendText(dst)
		return append(dst, '"'), nil
	case warehouse.Date:
		dst = append(dst, '"')
		dst = appendDate(dst, v.Days)
		return append(dst, '"'), nil
	case warehouse.Timestamp:
		if y := v.Time.UTC().Year(); y < 1 || y > 9999 {
			return dst, fmt.Errorf("timestamp %s outside BigQuery's range (years 0001-9999)", v.Time)
		}
		dst = append(dst, '"')
		dst = v.Time.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000000Z07:00")
		return append(dst, '"'), nil
	}
	return dst, fmt.Errorf("unsupported column type %q", typ)
}

// appendDate appends days since 1970-01-01 as YYYY-MM-DD, by the civil
// calendar arithmetic of http://howardhinnant.github.io/date_algorithms.html
// (days_from_civil's inverse): a tenth of time.Time.AppendFormat's cost,
// which dominated the row. Years outside 0001-9999, which BigQuery refuses
// anyway, go through the time package, so the text stays what it was.
func appendDate(dst []byte, days int32) []byte {
	z := int64(days) + 719468
	era := z / 146097
	if z < 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	if y < 1 || y > 9999 {
		return warehouse.DayTime(days).AppendFormat(dst, "2006-01-02")
	}
	return append(dst,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-',
		byte('0'+d/10), byte('0'+d%10))
}

// appendString is warehouse.AppendJSONString with a shortcut for the usual
// value, printable ASCII without a quote or a backslash, which JSON takes as
// it is: tested eight bytes at a time instead of byte by byte.
func appendString(dst []byte, s string) []byte {
	if !plainJSON(s) {
		return warehouse.AppendJSONString(dst, s)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// plainJSON reports whether s holds only bytes 0x20-0x7F other than '"' and
// '\\'. Per 64-bit word, (w - 0x01..01) &^ w has a byte's high bit set
// where that byte of w is zero (and only if some byte is), which finds the
// quotes (w XOR '"'...), the backslashes and, from w - 0x20..20, the control
// bytes; non-ASCII bytes have their own high bit set.
func plainJSON(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		_ = s[7]
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		q, bs := w^('"'*ones), w^('\\'*ones)
		if (w|(w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
