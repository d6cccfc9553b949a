package bigquery

import (
	"fmt"
	"strconv"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// rowEncoder writes rows of one table as the JSON objects BigQuery's load
// and insertAll read without loss: NUMERIC as a decimal string (a JSON
// number may be read as a double); INT64 as a number within ±(2^53-1),
// else a string; DATE as YYYY-MM-DD; TIMESTAMP in UTC truncated to the
// microseconds BigQuery keeps; NULL as an absent key.
//
// It allocates nothing per row. Once a column's value repeats, its JSON is
// kept and copied: a file's lineage is the same on every row, and a time
// formatted or a string escaped costs more than the rest of the row.
type rowEncoder struct {
	table warehouse.Table
	cols  []encColumn
}

type encColumn struct {
	key      []byte // `,"name":`, quoted once; a row's first comma becomes its '{'
	typ      warehouse.Type
	required bool
	// last is the previous non-NULL value (seen: there is one); cell is its
	// key and JSON, kept once last repeated.
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

// maxExactJSONInt is the largest integer a double holds exactly.
const maxExactJSONInt = 1<<53 - 1

// appendRow appends row as one JSON object (no newline), refusing a row of
// the wrong width or a NULL in a REQUIRED column by name, rather than
// failing the whole load job later.
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
		same := c.seen && warehouse.SameValue(c.typ, &c.last, v)
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
			c.last, c.seen, c.cell = *v, true, c.cell[:0]
		}
	}
	if len(dst) == start {
		return append(dst, '{', '}'), nil
	}
	dst[start] = '{'
	return append(dst, '}'), nil
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

// appendDate appends days since 1970-01-01 as YYYY-MM-DD by
// http://howardhinnant.github.io/date_algorithms.html (civil_from_days), a
// tenth of AppendFormat's cost, which dominated the row; years outside
// 0001-9999 go through the time package.
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

// appendString is warehouse.AppendJSONString with a shortcut for printable
// ASCII without a quote or backslash, tested eight bytes at a time.
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
