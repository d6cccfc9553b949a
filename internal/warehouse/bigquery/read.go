package bigquery

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Read runs a named read as GoogleSQL with query parameters, so its text is
// the same for every value (BigQuery caches it). Its text is a fixed
// SELECT, so no dry run checks it first.
func (w *Warehouse) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return w.readSQL(ctx, s.Name(), s.SQL(), s.Params())
}

// readSQL is Read of any SQL, for tests of their own SQL.
func (w *Warehouse) readSQL(ctx context.Context, name, sql string, params []warehouse.Param) (warehouse.Result, error) {
	q := w.newQuery(sql)
	for _, p := range params {
		v, err := paramValue(p)
		if err != nil {
			return warehouse.Result{}, fmt.Errorf("read %s: %w", name, err)
		}
		q.Parameters = append(q.Parameters, bigquery.QueryParameter{Name: p.Name, Value: v})
	}
	var c warehouse.Collect
	it, err := q.Read(ctx)
	if err == nil {
		err = collect(it, &c)
	}
	if err != nil {
		return warehouse.Result{}, fmt.Errorf("read %s: %w", name, err)
	}
	return c.Result, nil
}

// paramValue is p as the client types it (an array typed even when empty).
func paramValue(p warehouse.Param) (any, error) {
	switch p.Type {
	case warehouse.String:
		return typed(p, func(v warehouse.Value) string { return v.Str }), nil
	case warehouse.Int64:
		return typed(p, func(v warehouse.Value) int64 { return v.Int }), nil
	case warehouse.Numeric:
		return typed(p, func(v warehouse.Value) *big.Rat {
			return new(big.Rat).SetFrac(v.Dec.BigNanos(), big.NewInt(1e9))
		}), nil
	case warehouse.Date:
		return typed(p, func(v warehouse.Value) civil.Date { return civil.DateOf(warehouse.DayTime(v.Days)) }), nil
	case warehouse.Timestamp:
		return typed(p, func(v warehouse.Value) time.Time { return v.Time.UTC() }), nil
	}
	return nil, fmt.Errorf("parameter %s: type %s", p.Name, p.Type)
}

func typed[T any](p warehouse.Param, f func(warehouse.Value) T) any {
	out := make([]T, len(p.Values))
	for i, v := range p.Values {
		out[i] = f(v)
	}
	if p.Array {
		return out
	}
	return out[0]
}
