package duckdb

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Append inserts rows into table but those whose ID was appended to it
// before, recording the IDs in the rows' transaction. Appends are small,
// so rows go one statement each.
func (w *Warehouse) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	t, err := warehouse.Lookup(table)
	if err != nil {
		return fmt.Errorf("append to %s: %w", table, err)
	}
	if len(rows) == 0 {
		return nil
	}
	args := make([][]any, len(rows))
	for i, r := range rows {
		if r.ID == "" {
			return fmt.Errorf("append to %s: row %d has no ID", table, i)
		}
		if args[i], err = bindArgs(t.Schema, r.Values); err != nil {
			return fmt.Errorf("append to %s: row %s: %w", table, r.ID, err)
		}
	}
	unlock := w.appends.lock(table)
	defer unlock()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("append to %s: %w", table, err)
	}
	defer conn.Close()
	mark := "INSERT INTO " + appendTable + " VALUES (?, ?) ON CONFLICT DO NOTHING"
	ins := insertValues(t)
	err = inTx(ctx, conn, func() error {
		for i, r := range rows {
			res, err := conn.ExecContext(ctx, mark, t.Name, r.ID)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 0 {
				continue // appended before: the retry adds nothing
			}
			if _, err := conn.ExecContext(ctx, ins, args[i]...); err != nil {
				return fmt.Errorf("row %s: %w", r.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append %d rows to %s: %w", len(rows), table, err)
	}
	return nil
}

// insertValues is the single-row INSERT for t, converting as the spool does.
func insertValues(t warehouse.Table) string {
	vals := make([]string, len(t.Schema))
	for i, f := range t.Schema {
		switch f.Type {
		case warehouse.Numeric:
			vals[i] = "CAST(? AS DECIMAL(38,0)) * " + nanoUnit
		case warehouse.Timestamp:
			vals[i] = "make_timestamp(CAST(? AS BIGINT))"
		case warehouse.Date:
			vals[i] = "CAST(? AS DATE)"
		default:
			vals[i] = "?"
		}
	}
	return "INSERT INTO " + t.Name + " VALUES (" + strings.Join(vals, ", ") + ")"
}

func bindArgs(schema []warehouse.Field, row []warehouse.Value) ([]any, error) {
	if len(row) != len(schema) {
		return nil, fmt.Errorf("%d values for %d columns", len(row), len(schema))
	}
	args := make([]any, len(row))
	for i, v := range row {
		f := &schema[i]
		if v.Null {
			if f.Required() {
				return nil, fmt.Errorf("column %s is REQUIRED but NULL", f.Name)
			}
			continue
		}
		switch f.Type {
		case warehouse.String:
			if !utf8.ValidString(v.Str) {
				return nil, fmt.Errorf("column %s: %w", f.Name, errNotUTF8)
			}
			args[i] = v.Str
		case warehouse.Int64:
			args[i] = v.Int
		case warehouse.Numeric:
			args[i] = string(v.Dec.AppendNanos(nil)) // units as text: they may pass 64 bits
		case warehouse.Date:
			args[i] = warehouse.FormatDate(v.Days)
		case warehouse.Timestamp:
			args[i] = v.Time.UnixMicro()
		default:
			return nil, fmt.Errorf("column %s: unsupported type %s", f.Name, f.Type)
		}
	}
	return args, nil
}
