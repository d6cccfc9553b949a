// Package bqfake is a fake of the BigQuery v2 REST API that checks requests
// as BigQuery would. There is no BigQuery emulator, so this hand-written
// fake stands in for BigQuery in the adapter's tests, in the warehouse
// conformance suite and in the production-parity stack, where the real
// client reaches it with
//
//	option.WithEndpoint("http://HOST:PORT/bigquery/v2/"), option.WithoutAuthentication()
//
// It speaks what the adapter uses (jobs.insert, jobs.get, jobs.query,
// jobs.getQueryResults, tabledata.insertAll) with the wire types of the
// generated client (google.golang.org/api/bigquery/v2) and BigQuery's error
// shapes, and it refuses what BigQuery refuses:
//
//   - job IDs: letters, digits, '_' and '-', at most 1,024; a reused ID is
//     409 "Already Exists: Job <project>:<location>.<id>" (reason duplicate);
//   - jobs.get needs the job's location, or it answers 404 like a regional
//     BigQuery does;
//   - labels: keys and values of at most 63 characters, lower-case letters,
//     digits, '_' and '-', keys starting with a letter;
//   - load jobs: the destination table must exist under CREATE_NEVER; the
//     source URIs must exist in staging (Options.Staged) and carry no
//     generation; the schema (names, types, modes) must match the table;
//     every NDJSON line is parsed and checked against the schema (REQUIRED
//     fields, INT64/NUMERIC/DATE/TIMESTAMP forms, unknown fields), failing
//     the job with reason invalid; the rows land atomically when the job
//     turns DONE;
//   - query jobs: GoogleSQL only; named parameters must be used by the SQL;
//     the tables the SQL reads must exist; a partition decorator must be
//     $YYYYMMDD of a real date on a DAY-partitioned table;
//   - insertAll: rows are checked like load lines, and insertId is at most
//     128 characters (BigQuery's streaming limit); a bad row rejects the
//     request with insertErrors (invalid, the rest stopped); insertId
//     deduplicates.
//
// The tables are those of internal/warehouse/schema/*.json, created at New
// in Options.Dataset as Terraform creates them, plus the dashboard view.
//
// Violations. Some requests BigQuery would accept break a rule of this
// codebase: a job without an ID or location, a load or query that may
// create a table (not CREATE_NEVER), an insertAll row without insertId, a
// query without a default dataset, a request this fake does not know (a
// media upload to /upload/bigquery/v2/, tables.get, ...). Such a request is
// answered with BigQuery's error shape (400, reason invalid, message
// starting "bqfake:") and recorded; Violations lists them, and tests call
// FailOnViolations so that any violation fails the test at cleanup.
//
// What this fake does not do, and so stays unverified until the live
// conformance run against a real project:
//
//   - SQL is not executed, but for the named reads of package warehouse
//     (reads.go: a query whose text is exactly one, with its parameters
//     typed as declared, is answered by a Go model of it from the rows
//     held) and one SELECT form (selectrows.go: columns
//     or SUMs of one table, '=' and IN filters joined by AND, ORDER BY
//     columns), computed from the rows held and sent as BigQuery sends
//     them (NUMERIC as a decimal string; a NUMERIC sum past the type's
//     range is a numeric overflow). Any other SELECT answers what Record
//     recorded for its exact text, or an empty result with no columns; so
//     the dashboard view's dedup and most queries' figures are unverified
//     here. Whether
//     BigQuery compiles the SQL is not checked beyond the statement kind of
//     a dry run (its first keyword) and the tables it names.
//   - A refresh job (RefreshDaily: WRITE_TRUNCATE of <aggregate>$YYYYMMDD)
//     is checked as above and completes DONE. When its SQL is exactly the
//     aggregate's shared definition and its @fecha is the decorator's date,
//     the partition's new rows are computed by a Go model of the Aggregate
//     declaration (keys, SUM/COUNT, newest-generation rule), so Rows of
//     ventas_diarias_sku follows the loads; that the SQL computes the same
//     is for the live run (and for DuckDB, which runs the same definition)
//     to show. Any other query job leaves its destination unchanged.
//   - Authentication, IAM, quotas and rate limits, the 1,500 table
//     modifications a day, dataset location, streaming-buffer visibility,
//     and insertId deduplication's one-minute window (here it is forever).
//   - Job timing: a job runs for Options.RunningPolls jobs.get polls, not
//     for real seconds.
package bqfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Options configures a Fake.
type Options struct {
	Project string // the only project it holds
	Dataset string // the analytics dataset, holding every table of warehouse.Tables
	// Staged opens a staged NDJSON file that a load job reads (e.g. from the
	// fake GCS). An error fails the load job with reason notFound.
	Staged func(ctx context.Context, bucket, name string) (io.ReadCloser, error)
	// RunningPolls is how many jobs.get calls answer RUNNING before a job is
	// DONE; 0 completes jobs at insert.
	RunningPolls int
	// Accumulation is the mode the dashboard view is modelled in when a
	// named read uses it (reads.go); "" means ACCUMULATING.
	Accumulation string
}

// Fake is the fake BigQuery. It is safe for concurrent use.
type Fake struct {
	project string
	dataset string
	staged  func(ctx context.Context, bucket, name string) (io.ReadCloser, error)

	mu           sync.Mutex
	tables       map[string]*table // by table name, in dataset
	views        map[string]bool
	jobs         map[string]*job
	order        []string // job IDs in insertion order
	calls        []string // "method id" in arrival order
	faults       map[string][]fault
	races        map[string]Race
	failJobs     map[string]*bq.ErrorProto
	runningPolls int
	accumulation string
	results      map[string]Result
	pageSize     int
	queryCount   int
	violations   []string
}

type table struct {
	schema    []warehouse.Field
	partition string
	rows      []map[string]any
	insertIDs map[string]bool
}

type job struct {
	job       *bq.Job
	pollsLeft int
	finish    func() *bq.ErrorProto // applied once, when the job turns DONE
	result    *Result               // query jobs: what getQueryResults pages
}

// fault makes the next request of a method answer status: before touching
// anything, or after its effect (the job is created, the rows inserted),
// which is what a lost response looks like to the client.
type fault struct {
	status int
	after  bool
}

// Race makes another writer insert the same job ID just before ours.
type Race struct {
	Labels     map[string]string // the other writer's job labels
	SourceURIs []string          // its load's sources (nil: ours)
	Fails      *bq.ErrorProto    // nil: its job succeeds
}

// Result is a recorded query answer: column names and wire types, and rows
// whose cells are nil (NULL) or the value's text (TIMESTAMP as RFC 3339,
// converted to the requested wire form).
type Result struct {
	Fields []*bq.TableFieldSchema
	Rows   [][]any
}

// Job is what Jobs reports of one job.
type Job struct {
	ID       string
	Location string
	State    string // RUNNING or DONE
	Config   *bq.JobConfiguration
	Error    *bq.ErrorProto // a DONE job's failure, nil on success
}

// New builds a fake holding Options.Dataset with every table of the
// warehouse schema (internal/warehouse/schema/*.json) and the dashboard
// view.
func New(opt Options) (*Fake, error) {
	var errs []error
	if opt.Project == "" {
		errs = append(errs, errors.New("empty project"))
	}
	if opt.Dataset == "" {
		errs = append(errs, errors.New("empty dataset"))
	}
	if opt.RunningPolls < 0 {
		errs = append(errs, fmt.Errorf("negative RunningPolls %d", opt.RunningPolls))
	}
	switch opt.Accumulation {
	case "", warehouse.Accumulating, warehouse.Discarding:
	default:
		errs = append(errs, fmt.Errorf("accumulation %q: want %s or %s", opt.Accumulation, warehouse.Accumulating, warehouse.Discarding))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("bqfake: %w", errors.Join(errs...))
	}
	f := &Fake{
		project:      opt.Project,
		dataset:      opt.Dataset,
		staged:       opt.Staged,
		tables:       make(map[string]*table),
		views:        make(map[string]bool),
		jobs:         make(map[string]*job),
		faults:       make(map[string][]fault),
		races:        make(map[string]Race),
		failJobs:     make(map[string]*bq.ErrorProto),
		runningPolls: opt.RunningPolls,
		accumulation: opt.Accumulation,
		results:      make(map[string]Result),
		pageSize:     1000,
	}
	for _, t := range warehouse.Tables() {
		f.SetTable(t)
	}
	for _, v := range warehouse.Views() {
		f.views[v.Name] = true
	}
	return f, nil
}

// Handler serves the REST API under /bigquery/v2/ (and answers requests to
// /upload/bigquery/v2/, where the client sends media uploads, as
// violations): mount it at the root of a server.
func (f *Fake) Handler() http.Handler { return http.HandlerFunc(f.serve) }

// SetTable creates or replaces a table of the dataset, empty.
func (f *Fake) SetTable(t warehouse.Table) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tables[t.Name] = &table{schema: slices.Clone(t.Schema), partition: t.PartitionField, insertIDs: make(map[string]bool)}
}

// DropTable deletes a table, as a missing Terraform resource would leave it.
func (f *Fake) DropTable(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tables, name)
}

// Rows returns the rows of a table of the dataset, each value in a
// canonical Go form: string, int64, *big.Rat (NUMERIC), DATE and TIMESTAMP
// as their text, nil for NULL.
func (f *Fake) Rows(tableName string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tables[tableName]
	if !ok {
		return nil
	}
	return slices.Clone(t.rows)
}

// InsertIDs returns the insertIds a table has seen, sorted.
func (f *Fake) InsertIDs(tableName string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tables[tableName]
	if !ok {
		return nil
	}
	var out []string
	for id := range t.insertIDs {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Jobs returns every job in insertion order (dry runs are not kept).
func (f *Fake) Jobs() []Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Job, 0, len(f.order))
	for _, id := range f.order {
		j := f.jobs[id]
		out = append(out, Job{
			ID:       id,
			Location: j.job.JobReference.Location,
			State:    j.job.Status.State,
			Config:   cloneConfig(j.job.Configuration),
			Error:    j.job.Status.ErrorResult,
		})
	}
	return out
}

// Calls returns the requests received, as "method id" (e.g. "jobs.insert
// alpipe-x-a1", "tabledata.insertAll lineas_pedido", "jobs.query").
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Violations returns the rule violations seen (see the package doc).
func (f *Fake) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.violations)
}

// TB is the part of testing.TB that FailOnViolations needs.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
}

// FailOnViolations fails t at cleanup for every violation the fake saw.
func (f *Fake) FailOnViolations(t TB) {
	t.Helper()
	t.Cleanup(func() {
		for _, v := range f.Violations() {
			t.Errorf("bqfake violation: %s", v)
		}
	})
}

// Fault makes the next request of method ("jobs.insert", "jobs.get",
// "tabledata.insertAll") answer status with reason backendError: before its
// effect, or after it when after is true (a lost response).
func (f *Fake) Fault(method string, status int, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[method] = append(f.faults[method], fault{status: status, after: after})
}

// Race makes another writer's job take jobID just before our insert.
func (f *Fake) Race(jobID string, r Race) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.races[jobID] = r
}

// FailJob makes the job inserted under jobID finish with this failure.
func (f *Fake) FailJob(jobID, reason, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failJobs[jobID] = &bq.ErrorProto{Reason: reason, Message: message, Location: jobID}
}

// SetRunningPolls changes Options.RunningPolls for jobs inserted later.
func (f *Fake) SetRunningPolls(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runningPolls = n
}

// SetPageSize sets the most rows a query answer page holds (default 1,000).
func (f *Fake) SetPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}

// Record makes queries whose SQL text is exactly sql answer r.
func (f *Fake) Record(sql string, r Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results[sql] = r
}

// SeedJob stores a finished job as if an earlier call had run it.
func (f *Fake) SeedJob(id, location string, cfg *bq.JobConfiguration, failure *bq.ErrorProto) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.newJob(id, location, cfg)
	j.job.Status = &bq.JobStatus{State: "DONE", ErrorResult: failure}
	if failure != nil {
		j.job.Status.Errors = []*bq.ErrorProto{failure}
	}
}

var apiPath = regexp.MustCompile(`^/bigquery/v2/projects/([^/]+)/(jobs|queries|datasets/([^/]+)/tables/([^/]+)/insertAll)(?:/([^/]+))?$`)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	m := apiPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, "unknown "+r.Method+" "+r.URL.Path)
		f.violate(w, "unexpected request %s %s: the adapter uses jobs.insert/get/query/getQueryResults and tabledata.insertAll only", r.Method, r.URL.Path)
		return
	}
	if m[1] != f.project {
		writeError(w, http.StatusNotFound, "notFound", "Not found: Project "+m[1])
		return
	}
	switch {
	case r.Method == http.MethodPost && m[2] == "jobs" && m[5] == "":
		f.insertJob(w, r)
	case r.Method == http.MethodGet && m[2] == "jobs" && m[5] != "":
		f.getJob(w, r, m[5])
	case r.Method == http.MethodPost && m[2] == "queries" && m[5] == "":
		f.query(w, r)
	case r.Method == http.MethodGet && m[2] == "queries" && m[5] != "":
		f.getQueryResults(w, r, m[5])
	case r.Method == http.MethodPost && m[3] != "" && m[5] == "":
		f.insertAll(w, r, m[3], m[4])
	default:
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, "unknown "+r.Method+" "+r.URL.Path)
		f.violate(w, "unexpected request %s %s", r.Method, r.URL.Path)
	}
}

// violation is a request BigQuery would accept that breaks a rule of this
// codebase (see the package doc).
type violation struct{ msg string }

func (v *violation) Error() string { return "bqfake: " + v.msg }

func violationf(format string, args ...any) error {
	return &violation{msg: fmt.Sprintf(format, args...)}
}

// violate records a violation and answers it; the caller holds mu.
func (f *Fake) violate(w http.ResponseWriter, format string, args ...any) {
	f.answer(w, violationf(format, args...))
}

// answer writes err as a 400 in BigQuery's shape, recording it when it is a
// violation; the caller holds mu. A *reasonError keeps its own reason.
func (f *Fake) answer(w http.ResponseWriter, err error) {
	var v *violation
	if errors.As(err, &v) {
		f.violations = append(f.violations, v.msg)
	}
	reason := "invalid"
	var re *reasonError
	if errors.As(err, &re) {
		reason = re.reason
	}
	writeError(w, http.StatusBadRequest, reason, err.Error())
}

// reasonError is a 400 with a reason other than invalid (invalidQuery).
type reasonError struct {
	reason string
	msg    string
}

func (e *reasonError) Error() string { return e.msg }

// takeFault pops the next scripted fault of a method; the caller holds mu.
func (f *Fake) takeFault(method string) (fault, bool) {
	q := f.faults[method]
	if len(q) == 0 {
		return fault{}, false
	}
	f.faults[method] = q[1:]
	return q[0], true
}

func (f *Fake) newJob(id, location string, cfg *bq.JobConfiguration) *job {
	now := time.Now().UnixMilli()
	j := &job{job: &bq.Job{
		Kind:          "bigquery#job",
		Id:            f.project + ":" + location + "." + id,
		JobReference:  &bq.JobReference{ProjectId: f.project, JobId: id, Location: location},
		Configuration: cfg,
		Status:        &bq.JobStatus{State: "PENDING"},
		Statistics:    &bq.JobStatistics{CreationTime: now, StartTime: now},
		UserEmail:     "alpipe@" + f.project + ".iam.gserviceaccount.com",
	}}
	f.jobs[id] = j
	f.order = append(f.order, id)
	return j
}

// complete turns a job DONE and applies its effect; the caller holds mu.
func (f *Fake) complete(j *job) {
	var failure *bq.ErrorProto
	if j.finish != nil {
		failure = j.finish()
	}
	j.job.Status = &bq.JobStatus{State: "DONE", ErrorResult: failure}
	if failure != nil {
		j.job.Status.Errors = []*bq.ErrorProto{failure}
	}
	j.job.Statistics.EndTime = time.Now().UnixMilli()
}

// cloneConfig deep-copies a configuration through its JSON form, so callers
// of Jobs cannot change what the fake holds.
func cloneConfig(c *bq.JobConfiguration) *bq.JobConfiguration {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var out bq.JobConfiguration
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return &out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in BigQuery's error shape, which googleapi.Error parses
// (Code, Message and Errors[].Reason).
func writeError(w http.ResponseWriter, status int, reason, message string) {
	writeJSON(w, status, map[string]any{
		"error": map[string]any{
			"code":    status,
			"message": message,
			"errors":  []map[string]any{{"message": message, "domain": "global", "reason": reason}},
			"status":  http.StatusText(status),
		},
	})
}
