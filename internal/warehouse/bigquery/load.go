package bigquery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// maxAttempts bounds the failed load jobs of one Load ID. Each failure is
// kept in the job history and looked up again by every later call, so an
// input that fails forever must end as an error, not as an endless series
// of jobs (each of which also counts against the table's daily quota).
const maxAttempts = 20

// stagingWriteBytes is how much encoded NDJSON is handed to the upload at
// once: rows are encoded straight into this buffer, so each byte is copied
// once more, into the upload's chunk, and the upload sees few, big writes.
const stagingWriteBytes = 1 << 20

// stagingPartBytes bounds one staged object. A Load's rows may span several
// objects, which its one load job reads together, atomically. BigQuery
// takes far larger files; the bound keeps each object within what the
// local storage stand-in holds (64 MiB), and the parts of a large file let
// BigQuery read them in parallel.
var stagingPartBytes int64 = 48 << 20 // a variable only so that a test can make parts small

// emptyLoadSQL is the marker job of a Load with no rows (see commitEmpty).
const emptyLoadSQL = "SELECT 0 AS filas_cargadas"

// ErrTooManyAttempts is wrapped when a Load ID has used up its attempts.
var ErrTooManyAttempts = errors.New("too many failed load attempts")

// Load appends req.Rows to req.Table exactly once per req.ID, with a load
// job named "<JobPrefix>-<ID>-a<N>" reading the rows staged as NDJSON.
//
// It first looks for earlier attempts: a succeeded job means the ID is
// already loaded (Rows is not read); a running one is waited for; a failed
// one moves on to the next attempt number. For the first attempt without a
// job it stages the rows, inserts the job and waits. If jobs.insert answers
// 409, another instance got there first with the same attempt and Load
// waits for that job instead. A failed job is returned as an error; the
// caller's retry will then use the next attempt number.
//
// A Load with no rows commits its ID too (a later Load of it reports
// AlreadyLoaded), with a marker job instead of a load: see commitEmpty.
func (w *Warehouse) Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	if w.opt.StagingBucket == "" {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, ErrNoStaging)
	}
	if err := warehouse.CheckID(req.ID, warehouse.MaxLoadIDLen); err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %q: invalid ID: %w", req.ID, err)
	}
	t, err := w.table(req.Table)
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
		// A crash between the job's success and the cleanup may have left
		// the staged file; removing it again is cheap.
		w.cleanup(ctx, done)
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
		// Failed: its ID is spent, try the next one.
	}
	return 0, nil, &warehouse.PermanentError{Err: fmt.Errorf("%w: %d jobs failed", ErrTooManyAttempts, maxAttempts)}
}

// runAttempt stages the rows for attempt n and runs its load job.
func (w *Warehouse) runAttempt(ctx context.Context, req warehouse.Load, t warehouse.Table, n int) (warehouse.LoadResult, error) {
	token, err := randomToken()
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	jobID := loadJobID(w.opt.JobPrefix, req.ID, n)
	labels := map[string]string{writerLabel: token}

	// Peek before creating anything: a file with no valid rows needs no
	// staged object and no load job.
	if !req.Rows.Next() {
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
	loader.JobID = jobID
	loader.Location = w.opt.Location
	loader.WriteDisposition = bigquery.WriteAppend
	loader.CreateDisposition = bigquery.CreateNever
	loader.Labels = labels

	// The library retries jobs.insert on 5xx and rate limits, because the
	// job ID makes the insert idempotent; a retry whose first try did land
	// comes back as 409 and is told apart from a race by the label.
	j, ours, err := w.insert(ctx, jobID, token, func() (*bigquery.Job, error) { return loader.Run(ctx) })
	if err != nil {
		// The staged object stays for the lifecycle rule: whether the
		// insert reached BigQuery is unknown, and a job may still read it.
		return warehouse.LoadResult{}, err
	}
	if !ours {
		// Another instance's job loads its own copy of the file; ours
		// will never be read.
		w.deleteStaged(ctx, names)
	}
	st, err := w.wait(ctx, j)
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	if st.Err() != nil {
		// Kept staged: the file a job failed on is the evidence.
		return warehouse.LoadResult{}, jobError(j, st)
	}
	w.cleanup(ctx, j)
	if !ours {
		return warehouse.LoadResult{AlreadyLoaded: true}, nil
	}
	return warehouse.LoadResult{Rows: rows}, nil
}

// commitEmpty commits a Load of no rows under its job ID, so that a retry
// with rows (say, a source read differently the second time) cannot load
// the ID after all. A load job of an empty file would do it too, but it
// would count against the table's 1,500 modifications a day and need a
// staged object; a query job reading no table (emptyLoadSQL) is free,
// modifies nothing and is kept in the job history like a load, which is all
// the attempt lookup needs.
func (w *Warehouse) commitEmpty(ctx context.Context, jobID string, labels map[string]string) (warehouse.LoadResult, error) {
	q := w.client.Query(emptyLoadSQL)
	q.JobID = jobID
	q.Location = w.opt.Location
	q.Labels = labels
	j, ours, err := w.insert(ctx, jobID, labels[writerLabel], func() (*bigquery.Job, error) { return q.Run(ctx) })
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	st, err := w.wait(ctx, j)
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	if st.Err() != nil {
		return warehouse.LoadResult{}, jobError(j, st)
	}
	if !ours {
		return warehouse.LoadResult{AlreadyLoaded: true}, nil
	}
	return warehouse.LoadResult{}, nil
}

// insert runs jobs.insert through run. On 409 it fetches the job that holds
// the ID and reports whether it is ours: the writer label carries token.
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

// stage streams the rows (the first one already current in req.Rows) into
// staging objects as NDJSON, first as name and then, past
// stagingPartBytes, as parts named after it, and returns their names and
// how many rows it wrote. On any error the upload in progress is aborted
// and the finished parts deleted, and no load job names them.
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
		ow = w.staging.Create(ctx, w.opt.StagingBucket, pn, "application/x-ndjson", map[string]string{
			"alpipe-load-id": req.ID,
			"alpipe-attempt": strconv.Itoa(n),
			"alpipe-table":   t.Name,
		})
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

// deleteStaged removes staged objects no load job will read; what a
// failure leaves, the bucket's lifecycle rule removes.
func (w *Warehouse) deleteStaged(ctx context.Context, names []string) {
	for _, name := range names {
		_ = w.staging.Delete(ctx, w.opt.StagingBucket, name)
	}
}

// cleanup deletes the staged files a succeeded load job read, taken from
// the job itself, so that it also works for a job another call (or a
// crashed instance) ran. Only files under the staging bucket and prefix are
// touched. A failure is not the Load's failure: the rows are committed, and
// the bucket's lifecycle rule removes what is left.
func (w *Warehouse) cleanup(ctx context.Context, j *bigquery.Job) {
	cfg, err := j.Config()
	if err != nil {
		return
	}
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

// bigquerySchema converts a table's schema for a load job. The schema is
// always sent, never detected: detection would guess types from the data.
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

// fieldType maps a column type to the library's name for it: the same
// words, except that the REST API and the library say INTEGER for INT64.
func fieldType(t warehouse.Type) bigquery.FieldType {
	if t == warehouse.Int64 {
		return bigquery.IntegerFieldType
	}
	return bigquery.FieldType(t)
}

func gsURI(bucket, name string) string { return "gs://" + bucket + "/" + name }
