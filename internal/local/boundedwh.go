package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

var _ duckdb.RowCapped = (*cappedCollect)(nil)

// boundedWarehouse is what localapi.WarehousePath serves to a cgo-free
// cmd/server: the warehouse as it is, except that Query, whose wire form
// is one JSON document held whole, is held to localapi.QueryPath's caps. An
// answer past one fails naming it (the remote client gets an error, never
// fewer rows); the server holds at most about MaxBytes of cells.
type boundedWarehouse struct {
	warehouse.Warehouse
	caps    config.Query
	capsErr error
}

func (b boundedWarehouse) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	if b.capsErr != nil {
		return warehouse.Result{}, b.capsErr
	}
	timeout := &limitError{msg: fmt.Sprintf("query cancelled after %s", b.caps.Timeout), limit: "ALPIPE_QUERY_TIMEOUT"}
	ctx, cancel := context.WithTimeoutCause(ctx, b.caps.Timeout, timeout)
	defer cancel()
	c := &cappedCollect{caps: b.caps}
	err := streamer(b.Warehouse).QueryRows(ctx, sql, c)
	switch {
	case c.limit != nil:
		return warehouse.Result{}, c.limit
	case err != nil && errors.Is(context.Cause(ctx), timeout):
		return warehouse.Result{}, timeout
	case err != nil:
		return warehouse.Result{}, err
	}
	return c.Result, nil
}

// cappedCollect is warehouse.Collect within a row and a byte cap; bytes are
// the cells' lengths, what the answer holds in memory and sends at least.
type cappedCollect struct {
	warehouse.Collect
	caps  config.Query
	bytes int64
	limit *limitError
}

func (c *cappedCollect) Row(cells []string) error {
	if int64(len(c.Result.Rows)) == c.caps.MaxRows {
		c.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows", c.caps.MaxRows), limit: "ALPIPE_QUERY_MAX_ROWS"}
		return errStop
	}
	for _, s := range cells {
		c.bytes += int64(len(s))
	}
	if c.bytes > c.caps.MaxBytes {
		c.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows: its cells pass %d bytes", len(c.Result.Rows), c.caps.MaxBytes), limit: "ALPIPE_QUERY_MAX_BYTES"}
		return errStop
	}
	return c.Collect.Row(cells)
}

// MaxRowBytes and RowTooLarge keep a row past the byte cap in the
// warehouse (duckdb.RowCapped).
func (c *cappedCollect) MaxRowBytes() int64 { return c.caps.MaxBytes }

func (c *cappedCollect) RowTooLarge(size int64) error {
	c.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows: the next row holds %d bytes of cells, more than %d", len(c.Result.Rows), size, c.caps.MaxBytes), limit: "ALPIPE_QUERY_MAX_BYTES"}
	return errStop
}
