package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// RefreshDaily replaces the given dates' rows of the aggregate in one
// transaction, so readers never see a date half rebuilt. The groups are
// computed once, into a temporary table the INSERT and the overflow report
// both read: scanning the source twice would double the time.
func (w *Warehouse) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	a, err := warehouse.LookupAggregate(aggregate)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	if len(dates) == 0 {
		return nil
	}
	dates = slices.Compact(slices.Sorted(slices.Values(dates)))
	groups, err := a.GroupsSQL(warehouse.DuckDB, warehouse.Unqualified, dates)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	const tmp = "refresh_groups"
	sel, over, err := a.RefreshSQL(warehouse.DuckDB, tmp)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	stmts := []string{
		"CREATE OR REPLACE TEMP TABLE " + tmp + " AS " + groups,
		"DELETE FROM " + a.Table + " WHERE " + a.DateColumn + " IN (" + warehouse.DateList(dates) + ")",
		"INSERT INTO " + a.Table + " " + sel,
	}

	w.refresh.Lock()
	defer w.refresh.Unlock()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	defer conn.Close()
	var overflows []warehouse.Overflow
	err = inTx(ctx, conn, func() error {
		for _, s := range stmts {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		if overflows, err = readOverflows(ctx, conn, a, over); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, "DROP TABLE "+tmp)
		return err
	})
	if err != nil {
		return fmt.Errorf("refresh %s for %d dates from %s: %w", aggregate, len(dates), warehouse.FormatDate(dates[0]), err)
	}
	return a.OverflowError(overflows)
}

func readOverflows(ctx context.Context, conn *sql.Conn, a warehouse.Aggregate, query string) ([]warehouse.Overflow, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	row := make([]*string, len(cols)) // Scan sets a NULL cell to nil
	dest := make([]any, len(cols))
	for i := range row {
		dest[i] = &row[i]
	}
	var out []warehouse.Overflow
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		o, err := a.ParseOverflow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	return out, rows.Err()
}
