package duckdb

import (
	"context"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Read runs a named read with its parameters as literals (Statement.Inline):
// DuckDB has no GoogleSQL array parameters.
func (w *Warehouse) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return warehouse.Collected(ctx, s.Inline(), w.QueryRows)
}
