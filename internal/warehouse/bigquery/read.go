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

// Read runs a named read as GoogleSQL with query parameters, so its text
// is the same for every value (BigQuery caches it).
// Its text is fixed in package warehouse as a SELECT, so no dry run checks
// it first; its answer is rendered as Query renders it.
func (w *Warehouse) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return w.readSQL(ctx, s.Name(), s.SQL(), s.Params())
}

// readSQL runs sql with params as Read runs the named read name (the
// GoogleSQL run sends some reads rewritten for the emulator).
func (w *Warehouse) readSQL(ctx context.Context, name, sql string,
	params []warehouse.Param) (warehouse.Result, error) {
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

// paramValue is p as the client types it: a Go value whose type names the
// parameter's (a slice for an array, typed even when empty).
func paramValue(p warehouse.Param) (any, error) {
	n := len(p.Values)
	switch p.Type {
	case warehouse.String:
		out := make([]string, n)
		for i, v := range p.Values {
			out[i] = v.Str
		}
		return pick(p.Array, out), nil
	case warehouse.Int64:
		out := make([]int64, n)
		for i, v := range p.Values {
			out[i] = v.Int
		}
		return pick(p.Array, out), nil
	case warehouse.Numeric:
		out := make([]*big.Rat, n)
		for i, v := range p.Values {
			r, ok := new(big.Rat).SetString(v.Dec.String())
			if !ok {
				return nil, fmt.Errorf("parameter %s: NUMERIC %s", p.Name, v.Dec)
			}
			out[i] = r
		}
		return pick(p.Array, out), nil
	case warehouse.Date:
		out := make([]civil.Date, n)
		for i, v := range p.Values {
			out[i] = civil.DateOf(warehouse.DayTime(v.Days))
		}
		return pick(p.Array, out), nil
	case warehouse.Timestamp:
		out := make([]time.Time, n)
		for i, v := range p.Values {
			out[i] = v.Time.UTC()
		}
		return pick(p.Array, out), nil
	}
	return nil, fmt.Errorf("parameter %s: type %s", p.Name, p.Type)
}

// pick returns the slice for an array, else its one element.
func pick[T any](array bool, vs []T) any {
	if array {
		return vs
	}
	return vs[0]
}
