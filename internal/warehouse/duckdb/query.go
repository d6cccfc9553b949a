package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

var (
	_ warehouse.Warehouse   = (*Warehouse)(nil)
	_ warehouse.RowStreamer = (*Warehouse)(nil)
)

// Query is QueryRows collected into memory.
func (w *Warehouse) Query(ctx context.Context, q string) (warehouse.Result, error) {
	return warehouse.Collected(ctx, q, w.QueryRows)
}

// QueryRows runs one read-only statement and hands its answer to sink row
// by row, as Querier renders it. Anything but a single SELECT is refused,
// as are the functions that reach past the tables (refusal), and the
// statement runs in a transaction rolled back. DuckDB keeps a RowCapped
// sink's cap.
func (w *Warehouse) QueryRows(ctx context.Context, q string, sink warehouse.RowSink) error {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	cols, err := checkReadOnly(conn, q)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if err := refuseFunctions(ctx, conn, q); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	run := q
	capped, isCapped := sink.(RowCapped)
	if isCapped {
		run = capRows(q, cols, capped.MaxRowBytes())
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	err = inTx(ctx, conn, func() error {
		if err := render(ctx, conn, run, names, sink); err != nil {
			return err
		}
		return errRollback
	})
	if size, ok := rowTooLarge(err); ok && isCapped {
		return fmt.Errorf("query: %w", capped.RowTooLarge(size))
	}
	if !errors.Is(err, errRollback) {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

// errRollback makes inTx roll a read back.
var errRollback = errors.New("rollback")

type column struct {
	name string
	typ  duckdb.Type
}

// checkReadOnly prepares q without running it (the context-free Prepare
// refuses several statements; the other would run all but the last),
// accepts only a SELECT and returns its columns.
func checkReadOnly(conn *sql.Conn, q string) ([]column, error) {
	var cols []column
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("not a DuckDB connection: %T", dc)
		}
		stmt, err := c.Prepare(q)
		if err != nil {
			return err
		}
		defer stmt.Close()
		ds, ok := stmt.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("not a DuckDB statement: %T", stmt)
		}
		typ, err := ds.StatementType()
		if err != nil {
			return err
		}
		if typ != duckdb.STATEMENT_TYPE_SELECT {
			return errors.New("only a single SELECT statement is allowed")
		}
		n, err := ds.ColumnCount()
		if err != nil {
			return err
		}
		cols = make([]column, n)
		for i := range cols {
			if cols[i].name, err = ds.ColumnName(i); err != nil {
				return err
			}
			// A type the driver cannot name is measured as text.
			cols[i].typ, _ = ds.ColumnType(i)
		}
		return nil
	})
	return cols, err
}

// render runs q, naming its columns names (a wrap renames repeated ones).
func render(ctx context.Context, conn *sql.Conn, q string, names []string, sink warehouse.RowSink) error {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	if len(names) != len(types) {
		return fmt.Errorf("the statement prepared with %d columns answers %d", len(names), len(types))
	}
	if err := sink.Columns(names); err != nil {
		return err
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	row := make([]string, len(vals))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			row[i] = formatValue(v, types[i].DatabaseTypeName())
		}
		if err := sink.Row(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

// formatValue renders one cell; DATE and TIMESTAMP both scan as time.Time.
func formatValue(v any, dbType string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		return string(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case duckdb.Decimal:
		if x.Value == nil {
			return "NULL"
		}
		return x.String() // the shortest exact form: "0.3", "-12"
	case time.Time:
		if dbType == "DATE" {
			return x.Format(time.DateOnly)
		}
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v) // integers, BOOLEAN, HUGEINT
}
