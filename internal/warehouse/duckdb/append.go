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
	inserts := make([]string, len(rows))
	for i, r := range rows {
		if r.ID == "" {
			return fmt.Errorf("append to %s: row %d has no ID", table, i)
		}
		if inserts[i], err = insertRow(t, r.Values); err != nil {
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
			if _, err := conn.ExecContext(ctx, inserts[i]); err != nil {
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

// insertRow is the INSERT of one row of t, its values written as the
// spool's literals.
func insertRow(t warehouse.Table, row []warehouse.Value) (string, error) {
	if len(row) != len(t.Schema) {
		return "", fmt.Errorf("%d values for %d columns", len(row), len(t.Schema))
	}
	vals := make([]string, len(row))
	for i, v := range row {
		f := t.Schema[i]
		switch {
		case v.Null && f.Required():
			return "", fmt.Errorf("column %s is REQUIRED but NULL", f.Name)
		case v.Null:
			vals[i] = "NULL"
		case f.Type == warehouse.String && !utf8.ValidString(v.Str):
			return "", fmt.Errorf("column %s: %w", f.Name, errNotUTF8)
		case kindOf(f.Type) == kindOther:
			return "", fmt.Errorf("column %s: unsupported type %s", f.Name, f.Type)
		default:
			vals[i] = literal(f, v)
		}
	}
	return "INSERT INTO " + t.Name + " VALUES (" + strings.Join(vals, ", ") + ")", nil
}
