package bigquery

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// RefreshDaily recomputes the given dates of an aggregate: per date, one
// query job writing the partition "<table>$YYYYMMDD" with WRITE_TRUNCATE
// (CREATE_NEVER), one of the table's 1,500 modifications a day, and one
// query job listing the groups it left out for sums out of range, returned
// as a *warehouse.OverflowError when nothing else failed. Every job is
// inserted before any is waited for, so the dates run in parallel; the
// failures are returned once all are done, each naming its date.
func (w *Warehouse) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	agg, err := warehouse.LookupAggregate(aggregate)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	if len(dates) == 0 {
		return nil
	}
	days := slices.Compact(slices.Sorted(slices.Values(dates)))
	// Every day's SQL, built before any job starts.
	type daySQL struct{ rows, overflows string }
	sqls := make([]daySQL, len(days))
	for i, day := range days {
		rows, overflows, err := agg.DaySQL(warehouse.BigQuery, w.qualify, day)
		if err != nil {
			return fmt.Errorf("refresh %s: %w", aggregate, err)
		}
		sqls[i] = daySQL{rows, overflows}
	}

	type started struct {
		day            int32
		refresh, check *bigquery.Job
	}
	jobs := make([]started, 0, len(days))
	var errs []error
	for i, day := range days {
		if err := checkPartitionDay(day); err != nil {
			errs = append(errs, &warehouse.PermanentError{Err: err})
			continue
		}
		j, err := w.startRefresh(ctx, agg, sqls[i].rows, day)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", warehouse.FormatDate(day), err))
			continue
		}
		c, err := w.startCheck(ctx, agg, sqls[i].overflows, j.ID())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", warehouse.FormatDate(day), err))
		}
		jobs = append(jobs, started{day, j, c})
	}
	var overflows []warehouse.Overflow
	for _, s := range jobs {
		err := w.await(ctx, s.refresh)
		if err == nil && s.check != nil {
			var o []warehouse.Overflow
			o, err = w.readCheck(ctx, agg, s.check)
			overflows = append(overflows, o...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", warehouse.FormatDate(s.day), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("refresh %s: %w", aggregate, errors.Join(errs...))
	}
	return agg.OverflowError(overflows)
}

// startCheck inserts the query job sql listing the groups of a date that
// the refresh job refreshID leaves out, named after it.
func (w *Warehouse) startCheck(ctx context.Context, agg warehouse.Aggregate,
	sql, refreshID string) (*bigquery.Job, error) {
	q := w.newQuery(sql)
	q.Labels = map[string]string{"alpipe-aggregate": agg.Table}
	return w.start(ctx, q, refreshID+"-overflows")
}

// start inserts q as job jobID. The ID being random, a 409 is our own
// retried insert: the job is ours.
func (w *Warehouse) start(ctx context.Context, q *bigquery.Query, jobID string) (*bigquery.Job, error) {
	if err := warehouse.CheckID(jobID, maxJobIDLen); err != nil {
		return nil, &warehouse.PermanentError{Err: fmt.Errorf("job ID %q: %w", jobID, err)}
	}
	q.JobID = jobID
	j, err := q.Run(ctx)
	if isDuplicate(err) {
		j, err = w.job(ctx, jobID)
	}
	if err != nil {
		return nil, fmt.Errorf("insert job %s: %w", jobID, err)
	}
	return j, nil
}

// readCheck waits for a startCheck job and reads its answer.
func (w *Warehouse) readCheck(ctx context.Context, agg warehouse.Aggregate, j *bigquery.Job) ([]warehouse.Overflow, error) {
	if err := w.await(ctx, j); err != nil {
		return nil, err
	}
	it, err := j.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", j.ID(), err)
	}
	var out []warehouse.Overflow
	for {
		var vals []bigquery.Value
		err := it.Next(&vals)
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read job %s: %w", j.ID(), err)
		}
		row := make([]*string, len(vals))
		for i, v := range vals {
			if s, ok := v.(string); ok {
				row[i] = &s
			}
		}
		o, err := agg.ParseOverflow(row)
		if err != nil {
			return nil, fmt.Errorf("read job %s: %w", j.ID(), err)
		}
		out = append(out, o...)
	}
}

// startRefresh inserts the query job rebuilding one date's partition.
func (w *Warehouse) startRefresh(ctx context.Context, agg warehouse.Aggregate, sql string, day int32) (*bigquery.Job, error) {
	jobID, err := refreshJobID(w.opt.JobPrefix, agg.Table, day)
	if err != nil {
		return nil, err
	}
	q := w.newQuery(sql)
	q.Dst = w.dataset.Table(agg.Table + "$" + partitionID(day))
	q.WriteDisposition, q.CreateDisposition = bigquery.WriteTruncate, bigquery.CreateNever
	q.Labels = map[string]string{"alpipe-aggregate": agg.Table}
	return w.start(ctx, q, jobID)
}

// qualify names a table fully, whatever the job's default dataset.
func (w *Warehouse) qualify(table string) string {
	return "`" + w.opt.Project + "." + w.opt.Dataset + "." + table + "`"
}
