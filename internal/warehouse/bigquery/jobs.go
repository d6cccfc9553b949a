package bigquery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/googleapi"
)

// writerLabel is the job label carrying the token of the call that inserted
// the job: after a 409 it tells another instance's job (this call appended
// nothing) from our own, inserted by an HTTP attempt whose answer was lost.
const writerLabel = "alpipe-writer"

// isNotFound reports BigQuery's 404, e.g. jobs.get of a job never inserted.
func isNotFound(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusNotFound
}

// isDuplicate reports BigQuery's 409 "Already Exists": a job ID or table taken.
func isDuplicate(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusConflict
}

// job fetches a job, naming its location: without it jobs.get answers 404
// outside the US and EU multi-regions.
func (w *Warehouse) job(ctx context.Context, id string) (*bigquery.Job, error) {
	return w.client.JobFromIDLocation(ctx, id, w.opt.Location)
}

// wait polls the job every PollInterval until it is done: Job.Wait's
// back-off grows to 30 s, past the deadline of an event handler whose load
// takes seconds. Cancelling ctx stops the wait, not the job.
func (w *Warehouse) wait(ctx context.Context, j *bigquery.Job) (*bigquery.JobStatus, error) {
	st := j.LastStatus()
	for st == nil || !st.Done() {
		if st != nil { // a known status is fresh: sleep before asking again
			t := time.NewTimer(w.opt.PollInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("wait for job %s: %w", j.ID(), ctx.Err())
			case <-t.C:
			}
		}
		var err error
		st, err = j.Status(ctx)
		if err != nil {
			return nil, fmt.Errorf("status of job %s: %w", j.ID(), err)
		}
	}
	return st, nil
}

// await waits for j and returns its failure.
func (w *Warehouse) await(ctx context.Context, j *bigquery.Job) error {
	st, err := w.wait(ctx, j)
	if err == nil && st.Err() != nil {
		err = jobError(j, st)
	}
	return err
}

// JobError is a job that finished unsuccessfully, with BigQuery's reason
// (https://cloud.google.com/bigquery/docs/error-messages).
type JobError struct {
	JobID   string
	Reason  string // e.g. invalid, notFound, backendError
	Message string
	err     error
}

func (e *JobError) Error() string {
	return fmt.Sprintf("job %s failed: %s: %s", e.JobID, e.Reason, e.Message)
}

func (e *JobError) Unwrap() error { return e.err }

// Permanent reports, for warehouse.IsPermanent, input and configuration
// failures, which fail every attempt the same way: the caller stops rather
// than burn the table's daily quota. BigQuery's own failures and quotas
// may pass on another attempt.
func (e *JobError) Permanent() bool {
	switch e.Reason {
	case "backendError", "internalError", "jobBackendError", "jobInternalError",
		"rateLimitExceeded", "quotaExceeded", "resourcesExceeded", "timeout":
		return false
	}
	return true
}

// jobError describes a job that finished unsuccessfully.
func jobError(j *bigquery.Job, st *bigquery.JobStatus) error {
	e := &JobError{JobID: j.ID(), err: st.Err()}
	var be *bigquery.Error
	if errors.As(st.Err(), &be) {
		e.Reason, e.Message = be.Reason, be.Message
	} else {
		e.Message = st.Err().Error()
	}
	return e
}

// labelOf returns a label of a load or query job's configuration.
func labelOf(j *bigquery.Job, key string) string {
	cfg, err := j.Config()
	if err != nil {
		return ""
	}
	switch c := cfg.(type) {
	case *bigquery.LoadConfig:
		return c.Labels[key]
	case *bigquery.QueryConfig:
		return c.Labels[key]
	}
	return ""
}
