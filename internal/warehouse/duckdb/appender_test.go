package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// appendRows streams rows through the duckdb-go Appender on conn, inside the
// caller's transaction: the alternative to spoolAndInsert that BenchmarkLoad
// measures it against. It lives in a test file because it lost.
func appendRows(ctx context.Context, conn *sql.Conn, t warehouse.Table, rows warehouse.RowSource) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("not a driver connection: %T", dc)
		}
		a, err := duckdb.NewAppender(dconn, "", "main", t.Name)
		if err != nil {
			return err
		}
		args := make([]driver.Value, len(t.Schema))
		for rows.Next() {
			row := rows.Row()
			if err := cellsOf(args, t.Schema, row); err != nil {
				_ = a.Close()
				return fmt.Errorf("row %d: %w", n+1, err)
			}
			if err := a.AppendRow(args...); err != nil {
				_ = a.Close()
				return fmt.Errorf("row %d: %w", n+1, err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			_ = a.Close()
			return fmt.Errorf("read rows: %w", err)
		}
		return a.CloseWithCancel(ctx)
	})
	return n, err
}

// cellsOf converts a row for the Appender. NUMERIC goes in as the scaled
// int64 itself: duckdb-go writes an integer into a DECIMAL vector as the
// unscaled value, which is exactly numeric.Dec's representation.
func cellsOf(args []driver.Value, schema []warehouse.Field, row []warehouse.Value) error {
	if len(row) != len(schema) {
		return fmt.Errorf("%d values for %d columns", len(row), len(schema))
	}
	for i, v := range row {
		f := &schema[i]
		if v.Null {
			if f.Required() {
				return fmt.Errorf("column %s is REQUIRED but NULL", f.Name)
			}
			args[i] = nil
			continue
		}
		switch f.Type {
		case warehouse.String:
			if !utf8.ValidString(v.Str) {
				return fmt.Errorf("column %s: %w", f.Name, errNotUTF8)
			}
			args[i] = v.Str
		case warehouse.Int64:
			args[i] = v.Int
		case warehouse.Numeric:
			args[i] = string(v.Dec.AppendNanos(nil))
		case warehouse.Date:
			args[i] = warehouse.DayTime(v.Days)
		case warehouse.Timestamp:
			args[i] = v.Time
		default:
			return fmt.Errorf("column %s: unsupported type %s", f.Name, f.Type)
		}
	}
	return nil
}
