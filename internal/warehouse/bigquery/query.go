package bigquery

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Query runs one read-only SQL statement and returns its whole answer (see
// QueryRows).
func (w *Warehouse) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	return warehouse.Collected(ctx, sql, w.QueryRows)
}

// QueryRows runs one read-only GoogleSQL statement with the dataset as the
// default dataset and hands its answer to sink page by page, rendered as
// the embedded warehouse renders it. A free dry run first refuses anything
// but a SELECT, before it can change the warehouse.
func (w *Warehouse) QueryRows(ctx context.Context, sql string, sink warehouse.RowSink) error {
	if err := w.checkSelect(ctx, sql); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	it, err := w.newQuery(sql).Read(ctx)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return collect(it, sink)
}

// collect hands an answer to sink as text. The schema is known once the
// first page is read, so the columns follow the first fetch.
func collect(it *bigquery.RowIterator, sink warehouse.RowSink) error {
	var row []string
	for n := 0; ; n++ {
		var vals []bigquery.Value
		err := it.Next(&vals)
		done := errors.Is(err, iterator.Done)
		if err != nil && !done {
			return fmt.Errorf("query: read rows: %w", err)
		}
		if n == 0 {
			names := make([]string, len(it.Schema))
			for i, f := range it.Schema {
				names[i] = f.Name
			}
			if err := sink.Columns(names); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		row = row[:0]
		for _, v := range vals {
			row = append(row, render(v))
		}
		if err := sink.Row(row); err != nil {
			return err
		}
	}
}

func (w *Warehouse) newQuery(sql string) *bigquery.Query {
	q := w.client.Query(sql)
	q.Location, q.DefaultProjectID, q.DefaultDatasetID = w.opt.Location, w.opt.Project, w.opt.Dataset
	return q
}

// checkSelect dry-runs sql and accepts only a single SELECT statement.
func (w *Warehouse) checkSelect(ctx context.Context, sql string) error {
	q := w.newQuery(sql)
	q.DryRun = true
	j, err := q.Run(ctx)
	if err != nil {
		return err
	}
	kind := ""
	if st := j.LastStatus(); st != nil && st.Statistics != nil {
		if qs, ok := st.Statistics.Details.(*bigquery.QueryStatistics); ok {
			kind = qs.StatementType
		}
	}
	if kind != "SELECT" {
		return fmt.Errorf("only a single SELECT statement is allowed, this is %s", cmp.Or(kind, "of unknown type"))
	}
	return nil
}

// render writes one value as Querier says (warehouse.Warehouse).
func render(v bigquery.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case *big.Rat:
		return warehouse.DecimalString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	}
	return fmt.Sprint(v) // INT64, BOOL, civil dates and times
}
