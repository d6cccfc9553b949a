package bigquery

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// maxAttempts bounds the failed load jobs of one Load ID: every later call
// looks each failure up again, and each counts against the table's daily
// quota, so an input that fails forever must end as an error.
const maxAttempts = 20

// stagingWriteBytes is how much encoded NDJSON is handed to the upload at
// once, so the upload sees few, big writes.
const stagingWriteBytes = 1 << 20

// stagingPartBytes bounds one staged object (the local storage stand-in
// holds 64 MiB); one load job reads all the parts of a Load, atomically.
var stagingPartBytes int64 = 48 << 20 // a variable so that a test can make parts small

// emptyLoadSQL is the marker job of a Load with no rows (see commitEmpty).
const emptyLoadSQL = "SELECT 0 AS filas_cargadas"

// Load appends req.Rows to req.Table exactly once per req.ID, with a load
// job named "<JobPrefix>-<ID>-a<N>" reading the rows staged as NDJSON.
// Earlier attempts are looked up first: a succeeded one means the ID is
// loaded (Rows is not read), a running one is waited for, a failed one
// moves on to the next attempt number. A 409 on jobs.insert means another
// instance took the same attempt, and Load waits for its job instead.
func (w *Warehouse) Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	if w.opt.StagingBucket == "" {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, ErrNoStaging)
	}
	if err := warehouse.CheckID(req.ID, warehouse.MaxLoadIDLen); err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %q: invalid ID: %w", req.ID, err)
	}
	t, err := warehouse.Lookup(req.Table)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	if req.Rows == nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: nil row source", req.ID)
	}
	attempt, done, err := w.nextAttempt(ctx, req.ID)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	if done != nil {
		w.cleanup(ctx, done) // a crash may have left the staged file
		return warehouse.LoadResult{AlreadyLoaded: true}, nil
	}
	res, err := w.runAttempt(ctx, req, t, attempt)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s into %s: %w", req.ID, req.Table, err)
	}
	return res, nil
}

// nextAttempt walks the attempts of id in order. It returns the job that
// succeeded, or else the first attempt number that has no job yet.
func (w *Warehouse) nextAttempt(ctx context.Context, id string) (attempt int, done *bigquery.Job, err error) {
	for n := 1; n <= maxAttempts; n++ {
		jobID := loadJobID(w.opt.JobPrefix, id, n)
		j, err := w.job(ctx, jobID)
		if isNotFound(err) {
			return n, nil, nil
		}
		if err != nil {
			return 0, nil, fmt.Errorf("look up job %s: %w", jobID, err)
		}
		st, err := w.wait(ctx, j)
		if err != nil {
			return 0, nil, err
		}
		if st.Err() == nil {
			return n, j, nil
		}
	}
	return 0, nil, &warehouse.PermanentError{Err: fmt.Errorf("too many failed load attempts: %d jobs failed", maxAttempts)}
}

// runAttempt stages the rows for attempt n and runs its load job.
func (w *Warehouse) runAttempt(ctx context.Context, req warehouse.Load, t warehouse.Table, n int) (warehouse.LoadResult, error) {
	token, err := randomToken()
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	jobID := loadJobID(w.opt.JobPrefix, req.ID, n)
	labels := map[string]string{writerLabel: token}
	if !req.Rows.Next() { // no rows: no staged object, no load job
		if err := req.Rows.Err(); err != nil {
			return warehouse.LoadResult{}, fmt.Errorf("read rows: %w", err)
		}
		return w.commitEmpty(ctx, jobID, labels)
	}

	names, rows, err := w.stage(ctx, req, t, stagingName(w.opt.StagingPrefix, req.ID, n, token), n)
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	uris := make([]string, len(names))
	for i, name := range names {
		uris[i] = gsURI(w.opt.StagingBucket, name)
	}
	src := bigquery.NewGCSReference(uris...)
	src.SourceFormat = bigquery.JSON
	src.Schema = bigquerySchema(t)
	loader := w.dataset.Table(t.Name).LoaderFrom(src)
	loader.JobID, loader.Location, loader.Labels = jobID, w.opt.Location, labels
	loader.WriteDisposition, loader.CreateDisposition = bigquery.WriteAppend, bigquery.CreateNever
	j, ours, err := w.insert(ctx, jobID, token, func() (*bigquery.Job, error) { return loader.Run(ctx) })
	if err != nil {
		// The staged object stays for the lifecycle rule: a job may still read it.
		return warehouse.LoadResult{}, err
	}
	if !ours { // another instance's job reads its own copy of the file
		w.deleteStaged(ctx, names)
	}
	if err := w.await(ctx, j); err != nil {
		return warehouse.LoadResult{}, err // kept staged: the file a job failed on is the evidence
	}
	w.cleanup(ctx, j)
	if !ours {
		return warehouse.LoadResult{AlreadyLoaded: true}, nil
	}
	return warehouse.LoadResult{Rows: rows}, nil
}

// commitEmpty commits a Load of no rows under its job ID, so that a retry
// with rows cannot load the ID after all. A query job reading no table
// (emptyLoadSQL) is free and kept in the job history like a load, where a
// load of an empty file would count against the table's 1,500
// modifications a day and need a staged object.
func (w *Warehouse) commitEmpty(ctx context.Context, jobID string, labels map[string]string) (warehouse.LoadResult, error) {
	q := w.client.Query(emptyLoadSQL)
	q.JobID, q.Location, q.Labels = jobID, w.opt.Location, labels
	j, ours, err := w.insert(ctx, jobID, labels[writerLabel], func() (*bigquery.Job, error) { return q.Run(ctx) })
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	if err := w.await(ctx, j); err != nil {
		return warehouse.LoadResult{}, err
	}
	return warehouse.LoadResult{AlreadyLoaded: !ours}, nil
}

// insert runs jobs.insert through run. The library retries it on 5xx (the
// job ID makes that safe), so a 409 is a race or our own landed retry: the
// writer label, carrying token, tells which.
func (w *Warehouse) insert(ctx context.Context, jobID, token string, run func() (*bigquery.Job, error)) (j *bigquery.Job, ours bool, err error) {
	j, err = run()
	if isDuplicate(err) {
		j, err = w.job(ctx, jobID)
		if err != nil {
			return nil, false, fmt.Errorf("job %s exists, but: %w", jobID, err)
		}
		return j, labelOf(j, writerLabel) == token, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("insert job %s: %w", jobID, err)
	}
	return j, true, nil
}

// stage streams the rows (the first one already current) into staging
// objects as NDJSON, name and then parts named after it, and returns their
// names and the row count. On error nothing staged is left.
func (w *Warehouse) stage(ctx context.Context, req warehouse.Load, t warehouse.Table, name string, n int) (_ []string, rows int64, err error) {
	var names []string // the parts, in order
	var ow objects.Writer
	var part int64 // bytes in the part being written
	defer func() {
		if err != nil {
			if ow != nil {
				ow.Abort()
			}
			w.deleteStaged(ctx, names)
		}
	}()
	closePart := func() error {
		if err := ow.Close(); err != nil {
			return fmt.Errorf("stage %s: %w", gsURI(w.opt.StagingBucket, names[len(names)-1]), err)
		}
		ow, part = nil, 0
		return nil
	}
	openPart := func() {
		pn := name
		if len(names) > 0 {
			pn = strings.TrimSuffix(name, ".ndjson") + "-p" + strconv.Itoa(len(names)+1) + ".ndjson"
		}
		ow = w.staging.Create(ctx, w.opt.StagingBucket, pn, "application/x-ndjson",
			map[string]string{"alpipe-load-id": req.ID, "alpipe-attempt": strconv.Itoa(n), "alpipe-table": t.Name})
		names = append(names, pn)
	}
	write := func(b []byte) error {
		if ow == nil {
			openPart()
		}
		if _, err := ow.Write(b); err != nil {
			return fmt.Errorf("stage %s: %w", gsURI(w.opt.StagingBucket, names[len(names)-1]), err)
		}
		part += int64(len(b))
		if part >= stagingPartBytes-stagingWriteBytes {
			return closePart()
		}
		return nil
	}
	openPart()
	enc := newRowEncoder(t)
	buf := make([]byte, 0, stagingWriteBytes+64<<10)
	for more := true; more; more = req.Rows.Next() {
		rows++
		buf, err = enc.appendRow(buf, req.Rows.Row())
		if err != nil {
			return nil, 0, fmt.Errorf("row %d: %w", rows, err)
		}
		buf = append(buf, '\n')
		if len(buf) >= stagingWriteBytes {
			if err = write(buf); err != nil {
				return nil, 0, err
			}
			buf = buf[:0]
		}
	}
	if err = req.Rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read rows: %w", err)
	}
	if len(buf) > 0 {
		if err = write(buf); err != nil {
			return nil, 0, err
		}
	}
	if ow != nil {
		if err = closePart(); err != nil {
			return nil, 0, err
		}
	}
	return names, rows, nil
}

// deleteStaged removes staged objects no load job will read; the
// lifecycle rule removes what a failure leaves.
func (w *Warehouse) deleteStaged(ctx context.Context, names []string) {
	for _, name := range names {
		_ = w.staging.Delete(ctx, w.opt.StagingBucket, name)
	}
}

// cleanup deletes the staged files under the staging prefix that a
// succeeded load job read, taken from the job itself so that it also works
// for a job another (or a crashed) instance ran. Its failures are not the
// Load's: the rows are committed.
func (w *Warehouse) cleanup(ctx context.Context, j *bigquery.Job) {
	cfg, _ := j.Config()
	lc, ok := cfg.(*bigquery.LoadConfig)
	if !ok {
		return
	}
	ref, ok := lc.Src.(*bigquery.GCSReference)
	if !ok {
		return
	}
	for _, uri := range ref.URIs {
		name, ok := strings.CutPrefix(uri, gsURI(w.opt.StagingBucket, w.opt.StagingPrefix))
		if !ok || name == "" {
			continue
		}
		_ = w.staging.Delete(ctx, w.opt.StagingBucket, w.opt.StagingPrefix+name)
	}
}

// bigquerySchema converts a table's schema for a load job: always sent,
// never detected from the data.
func bigquerySchema(t warehouse.Table) bigquery.Schema {
	s := make(bigquery.Schema, len(t.Schema))
	for i, f := range t.Schema {
		s[i] = &bigquery.FieldSchema{
			Name:        f.Name,
			Type:        fieldType(f.Type),
			Required:    f.Required(),
			Description: f.Description,
		}
	}
	return s
}

// fieldType is the library's name of a type: INTEGER for INT64.
func fieldType(t warehouse.Type) bigquery.FieldType {
	if t == warehouse.Int64 {
		return bigquery.IntegerFieldType
	}
	return bigquery.FieldType(t)
}

func gsURI(bucket, name string) string { return "gs://" + bucket + "/" + name }
