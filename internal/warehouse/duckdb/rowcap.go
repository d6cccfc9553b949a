package duckdb

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// RowCapped is a RowSink that takes no row whose cells' text passes
// MaxRowBytes. DuckDB then measures each row before it leaves the engine
// and QueryRows ends with RowTooLarge(size) at the first one past: read in
// Go, one SELECT of a 1 GB value took the process to 5 GB.
type RowCapped interface {
	warehouse.RowSink
	MaxRowBytes() int64
	RowTooLarge(size int64) error
}

// capRows wraps q so that DuckDB fails it on a row whose cells, as text,
// pass max bytes; columns by position (names may repeat), fixed-width ones
// not measured.
func capRows(q string, cols []column, max int64) string {
	var terms []string
	for i, c := range cols {
		ref := "#" + strconv.Itoa(i+1)
		switch {
		case fixedWidth[c.typ]:
			continue
		case c.typ == duckdb.TYPE_VARCHAR:
			ref = "strlen(" + ref + ")"
		case c.typ == duckdb.TYPE_BLOB:
			ref = "octet_length(" + ref + ")"
		default:
			ref = "strlen(CAST(" + ref + " AS VARCHAR))"
		}
		terms = append(terms, "coalesce("+ref+", 0)")
	}
	if len(terms) == 0 {
		return q
	}
	size := strings.Join(terms, " + ")
	return "SELECT * FROM (\n" + q + "\n) AS capped\n" +
		"WHERE CASE WHEN " + size + " > " + strconv.FormatInt(max, 10) +
		" THEN error('" + rowTooLargeMark + "' || (" + size + ")) ELSE true END"
}

const rowTooLargeMark = "alpipe: row too large: "

var rowTooLargeErr = regexp.MustCompile(regexp.QuoteMeta(rowTooLargeMark) + `(\d+)`)

func rowTooLarge(err error) (int64, bool) {
	if err == nil {
		return 0, false
	}
	m := rowTooLargeErr.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

var fixedWidth = map[duckdb.Type]bool{
	duckdb.TYPE_BOOLEAN: true, duckdb.TYPE_TINYINT: true, duckdb.TYPE_SMALLINT: true, duckdb.TYPE_INTEGER: true,
	duckdb.TYPE_BIGINT: true, duckdb.TYPE_UTINYINT: true, duckdb.TYPE_USMALLINT: true, duckdb.TYPE_UINTEGER: true,
	duckdb.TYPE_UBIGINT: true, duckdb.TYPE_HUGEINT: true, duckdb.TYPE_UHUGEINT: true, duckdb.TYPE_FLOAT: true,
	duckdb.TYPE_DOUBLE: true, duckdb.TYPE_DECIMAL: true, duckdb.TYPE_DATE: true, duckdb.TYPE_TIME: true,
	duckdb.TYPE_TIME_TZ: true, duckdb.TYPE_TIMESTAMP: true, duckdb.TYPE_TIMESTAMP_S: true, duckdb.TYPE_TIMESTAMP_MS: true,
	duckdb.TYPE_TIMESTAMP_NS: true, duckdb.TYPE_TIMESTAMP_TZ: true, duckdb.TYPE_INTERVAL: true, duckdb.TYPE_UUID: true,
}
