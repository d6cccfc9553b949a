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
// It appends to a caller's buffer and allocates nothing per row.
type rowEncoder struct {
	table warehouse.Table
	keys  [][]byte // `"name":` per column, quoted once
}

func newRowEncoder(t warehouse.Table) *rowEncoder {
	e := &rowEncoder{table: t, keys: make([][]byte, len(t.Schema))}
	for i, f := range t.Schema {
		k := warehouse.AppendJSONString(nil, f.Name)
		e.keys[i] = append(k, ':')
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
	if len(row) != len(e.table.Schema) {
		return dst, fmt.Errorf("row has %d values, table %s has %d columns", len(row), e.table.Name, len(e.table.Schema))
	}
	dst = append(dst, '{')
	first := true
	for i, f := range e.table.Schema {
		v := row[i]
		if v.Null {
			if f.Required() {
				return dst, fmt.Errorf("column %s is REQUIRED but the value is NULL", f.Name)
			}
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, e.keys[i]...)
		var err error
		dst, err = appendCell(dst, f.Type, v)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// appendCell appends one non-NULL value as JSON.
func appendCell(dst []byte, typ warehouse.Type, v warehouse.Value) ([]byte, error) {
	switch typ {
	case warehouse.String:
		return warehouse.AppendJSONString(dst, v.Str), nil
	case warehouse.Int64:
		if v.Int >= -maxExactJSONInt && v.Int <= maxExactJSONInt {
			return strconv.AppendInt(dst, v.Int, 10), nil
		}
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v.Int, 10)
		return append(dst, '"'), nil
	case warehouse.Numeric:
		dst = append(dst, '"')
		dst = v.Dec.AppendText(dst)
		return append(dst, '"'), nil
	case warehouse.Date:
		dst = append(dst, '"')
		dst = warehouse.DayTime(v.Days).AppendFormat(dst, "2006-01-02")
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
