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
// the job. When jobs.insert answers 409, the job under that ID is either
// another instance's (it won the race for the same attempt) or this call's
// own, created by an earlier HTTP attempt whose answer was lost and then
// retried by the client library. Only the label tells them apart, and the
// answer differs: our own job appended our rows; another's means this call
// appended nothing.
const writerLabel = "alpipe-writer"

// isNotFound reports BigQuery's 404 (reason notFound), e.g. jobs.get of a
// job ID that was never inserted.
func isNotFound(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusNotFound
}

// isDuplicate reports jobs.insert's 409 "Already Exists: Job ..." (reason
// duplicate).
func isDuplicate(err error) bool {
	var e *googleapi.Error
	return errors.As(err, &e) && e.Code == http.StatusConflict
}

// job fetches an existing job with its configuration and status. The
// location is always given: without it jobs.get answers 404 for jobs
// outside the US and EU multi-regions.
func (w *Warehouse) job(ctx context.Context, id string) (*bigquery.Job, error) {
	return w.client.JobFromIDLocation(ctx, id, w.opt.Location)
}

// wait polls the job every PollInterval until it is done. Job.Wait is not
// used because its back-off for non-query jobs grows to 30 s between polls
// and cannot be tuned; a load of one file is usually done in seconds, and
// the caller (an event handler with a deadline) should not oversleep it.
// Cancelling ctx stops the wait, not the job: the next call finds the job
// by its ID and waits again.
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

// Transient reports whether running the work again (a load's next attempt,
// a refresh's new job) may succeed: BigQuery's own failures and quotas, as
// opposed to input or configuration errors, which fail every attempt the
// same way.
func (e *JobError) Transient() bool {
	switch e.Reason {
	case "backendError", "internalError", "jobBackendError", "jobInternalError",
		"rateLimitExceeded", "quotaExceeded", "resourcesExceeded", "timeout":
		return true
	}
	return false
}

// Permanent marks input and configuration failures for warehouse.IsPermanent:
// the caller stops retrying instead of burning the table's daily quota of
// modifications on jobs that fail the same way.
func (e *JobError) Permanent() bool { return !e.Transient() }

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
