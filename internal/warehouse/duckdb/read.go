package duckdb

import (
	"context"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Read runs a named read with its parameters written as literals
// (Statement.Inline): DuckDB has no GoogleSQL array parameters, and the
// literals are made from typed values, never from text a person typed. It
// is read-only as Query is.
func (w *Warehouse) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return warehouse.Collected(ctx, s.Inline(), w.QueryRows)
}
