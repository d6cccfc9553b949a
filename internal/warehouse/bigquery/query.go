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
	"cloud.google.com/go/civil"
	"google.golang.org/api/iterator"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Query runs one read-only SQL statement and returns its whole answer (see
// QueryRows).
func (w *Warehouse) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	return warehouse.Collected(ctx, sql, w.QueryRows)
}

// QueryRows runs one read-only SQL statement (GoogleSQL) with the dataset
// as the default dataset, so unqualified table names resolve as they do in
// DuckDB, and hands its answer to sink page by page as the iterator fetches
// it, every value rendered as text the way the embedded warehouse does. A
// dry run (free, not kept in the job history) first asks BigQuery what kind
// of statement it is: anything but a SELECT (DML, DDL, scripts) is refused
// before it can change the warehouse.
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

// collect hands an answer to sink as text, page by page.
func collect(it *bigquery.RowIterator, sink warehouse.RowSink) error {
	// The schema is known once the first page is read, so the first row is
	// fetched before the columns are handed on.
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
	q.Location = w.opt.Location
	q.DefaultProjectID = w.opt.Project
	q.DefaultDatasetID = w.opt.Dataset
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

// render writes one value as text: NULL as "NULL", NUMERIC exactly as the
// shortest decimal ("179.8", "0", "-0.05", like numeric.Dec), DATE as
// YYYY-MM-DD, TIMESTAMP as RFC 3339 in UTC.
func render(v bigquery.Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Rat:
		return warehouse.DecimalString(x)
	case civil.Date:
		return x.String()
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case fmt.Stringer: // civil.Time, civil.DateTime, intervals
		return x.String()
	}
	return fmt.Sprint(v)
}
