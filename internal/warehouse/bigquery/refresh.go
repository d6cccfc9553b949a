package bigquery

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// RefreshDaily recomputes the given dates of an aggregate from its source
// table: per date, one query job (the aggregate's shared SQL with the date
// as a DATE parameter) whose destination is the partition
// "<table>$YYYYMMDD" with WRITE_TRUNCATE, which replaces exactly that date
// and leaves every other one alone. The table must exist (CREATE_NEVER).
//
// Each date is one table modification of the aggregate (1,500 per table per
// day, shared by load, copy and query jobs, failed ones included): a file
// usually touches one date, so a day's files cost one load of the source
// table and about one refresh of the aggregate each.
//
// All jobs are inserted before any is waited for, so the dates run in
// parallel on BigQuery's side. The first failure is returned after every
// job has been waited for, naming each failed date.
func (w *Warehouse) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	agg, err := warehouse.LookupAggregate(aggregate)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	if len(dates) == 0 {
		return nil
	}
	sql, err := agg.SelectSQL(warehouse.BigQuery, w.qualify)
	if err != nil {
		return fmt.Errorf("refresh %s: %w", aggregate, err)
	}
	days := slices.Clone(dates)
	slices.Sort(days)
	days = slices.Compact(days)

	type started struct {
		day int32
		job *bigquery.Job
	}
	jobs := make([]started, 0, len(days))
	var errs []error
	for _, day := range days {
		if err := checkPartitionDay(day); err != nil {
			// No job could address the date; no retry will either.
			errs = append(errs, &warehouse.PermanentError{Err: err})
			continue
		}
		j, err := w.startRefresh(ctx, agg, sql, day)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", warehouse.FormatDate(day), err))
			continue
		}
		jobs = append(jobs, started{day, j})
	}
	for _, s := range jobs {
		st, err := w.wait(ctx, s.job)
		if err == nil && st.Err() != nil {
			err = jobError(s.job, st)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", warehouse.FormatDate(s.day), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("refresh %s: %w", aggregate, errors.Join(errs...))
	}
	return nil
}

// startRefresh inserts the query job rebuilding one date's partition.
func (w *Warehouse) startRefresh(ctx context.Context, agg warehouse.Aggregate, sql string, day int32) (*bigquery.Job, error) {
	jobID, err := refreshJobID(w.opt.JobPrefix, agg.Table, day)
	if err != nil {
		return nil, err
	}
	if err := checkJobIDPart(jobID, maxJobIDLen); err != nil {
		return nil, &warehouse.PermanentError{Err: fmt.Errorf("job ID %q: %w", jobID, err)}
	}
	labels := map[string]string{"alpipe-aggregate": agg.Table}
	if err := checkLabels(labels); err != nil {
		return nil, &warehouse.PermanentError{Err: err}
	}
	q := w.client.Query(sql)
	q.JobID = jobID
	q.Location = w.opt.Location
	q.DefaultProjectID = w.opt.Project
	q.DefaultDatasetID = w.opt.Dataset
	q.Parameters = []bigquery.QueryParameter{{
		Name:  warehouse.DateParam,
		Value: civil.DateOf(warehouse.DayTime(day)),
	}}
	q.Dst = w.dataset.Table(agg.Table + "$" + partitionID(day))
	q.WriteDisposition = bigquery.WriteTruncate
	q.CreateDisposition = bigquery.CreateNever
	q.Labels = labels
	j, err := q.Run(ctx)
	if isDuplicate(err) {
		// Only a retried insert of this very call can collide with a
		// random ID: the job is ours, wait for it.
		j, err = w.job(ctx, jobID)
	}
	if err != nil {
		return nil, fmt.Errorf("insert job %s: %w", jobID, err)
	}
	return j, nil
}

// qualify names a table of the dataset fully, so the SQL means the same
// whatever the job's default dataset.
func (w *Warehouse) qualify(table string) string {
	return "`" + w.opt.Project + "." + w.opt.Dataset + "." + table + "`"
}
