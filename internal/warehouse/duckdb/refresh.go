package duckdb

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// RefreshDaily recomputes the named aggregate (e.g. "ventas_diarias_sku")
// for exactly these dates (days since 1970-01-01), replacing those dates'
// rows in one transaction: readers see the old figures or the new ones,
// never a date half rebuilt. The rows come from the shared definition
// (warehouse.Aggregate), newest generation of each source object only.
func (w *Warehouse) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	a, err := warehouse.LookupAggregate(aggregate)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	if len(dates) == 0 {
		return nil
	}
	dates = slices.Clone(dates)
	slices.Sort(dates)
	dates = slices.Compact(dates)
	sel, err := a.SelectDatesSQL(warehouse.DuckDB, warehouse.Unqualified, dates)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	del := "DELETE FROM " + a.Table + " WHERE " + a.DateColumn + " IN (" + dateList(dates) + ")"
	ins := "INSERT INTO " + a.Table + " " + sel

	w.refresh.Lock()
	defer w.refresh.Unlock()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	defer conn.Close()
	err = inTx(ctx, conn, func() error {
		if _, err := conn.ExecContext(ctx, del); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, ins)
		return err
	})
	if err != nil {
		return fmt.Errorf("refresh %s for %d dates from %s: %w", aggregate, len(dates), warehouse.FormatDate(dates[0]), err)
	}
	return nil
}

func dateList(dates []int32) string {
	var b strings.Builder
	for i, d := range dates {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("DATE '" + warehouse.FormatDate(d) + "'")
	}
	return b.String()
}
