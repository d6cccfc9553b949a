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
// equal to its column's previous one is copied from that one's JSON: a
// file's lineage (object, generation, ingestion time) is the same on every
// row, and a time formatted or a long string escaped costs more than the
// rest of the row.
type rowEncoder struct {
	table warehouse.Table
	cols  []encColumn
}

type encColumn struct {
	key      []byte // `"name":`, quoted once
	typ      warehouse.Type
	required bool
	// last is the column's previous non-NULL value and its JSON (json nil:
	// none yet).
	last warehouse.Value
	json []byte
}

func newRowEncoder(t warehouse.Table) *rowEncoder {
	e := &rowEncoder{table: t, cols: make([]encColumn, len(t.Schema))}
	for i, f := range t.Schema {
		k := warehouse.AppendJSONString(nil, f.Name)
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
	dst = append(dst, '{')
	first := true
	for i := range e.cols {
		c, v := &e.cols[i], &row[i]
		if v.Null {
			if c.required {
				return dst, fmt.Errorf("column %s is REQUIRED but the value is NULL", e.table.Schema[i].Name)
			}
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, c.key...)
		if c.json != nil && sameValue(c.typ, &c.last, v) {
			dst = append(dst, c.json...)
			continue
		}
		start := len(dst)
		var err error
		dst, err = appendValue(dst, c.typ, v)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", e.table.Schema[i].Name, err)
		}
		c.last, c.json = *v, append(c.json[:0], dst[start:]...)
	}
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
		return warehouse.AppendJSONString(dst, v.Str), nil
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
