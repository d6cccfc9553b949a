// Package bqfake is a stand-in for BigQuery's v2 REST API, reached by the
// real client with option.WithEndpoint("http://HOST:PORT/bigquery/v2/") and
// option.WithoutAuthentication(). SQL runs on the BigQuery emulator
// (test/bqemulator, Options.SQL); the fake does the API semantics it
// lacks: job IDs, 409s and locations, labels, load lines checked,
// partition decorators with WRITE_TRUNCATE, insertId de-duplication, dry
// runs' statement type, NUMERIC range errors, unused parameters.
//
// The fake keeps every table's rows (for insertId de-duplication and Rows)
// and hands the emulator each load job and insertAll as the client sent
// them, so the emulator parses the client's files and bodies; every SELECT
// runs there as written, so no read has a Go model here. Without
// Options.SQL a query answers what Record recorded, or no rows.
//
// A request BigQuery would accept that breaks a rule of this codebase is
// answered 400 "bqfake: ..." and recorded (FailOnViolations). Left to the
// live run: authentication, IAM, quotas, streaming-buffer visibility, the
// windowed NUMERIC sums the emulator gets wrong, and job timing.
package bqfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Options configures a Fake.
type Options struct {
	Project string // the only project it holds
	Dataset string // holding every table of warehouse.Tables
	// Staged opens a file a load job reads; an error fails the job.
	Staged func(ctx context.Context, bucket, name string) (io.ReadCloser, error)
	// SQL is the URL of a BigQuery emulator serving Project, where New
	// creates what is missing of the dataset; empty, no SQL runs. It must
	// read the store Staged opens (its STORAGE_EMULATOR_HOST).
	SQL string
	// ViewSQL is the query of each view New creates on SQL (Terraform's);
	// required with SQL.
	ViewSQL func(v warehouse.View) (string, error)
}

// Fake is the fake BigQuery, safe for concurrent use.
type Fake struct {
	project, dataset string
	staged           func(ctx context.Context, bucket, name string) (io.ReadCloser, error)

	mu           sync.Mutex
	tables       map[string]*table
	jobs         map[string]*job
	order        []string // job IDs in insertion order
	calls        []string // "method id" in arrival order
	faults       map[string][]fault
	races        map[string]Race
	failJobs     map[string]*bq.ErrorProto
	runningPolls int
	sql          *engine // nil without Options.SQL
	results      map[string]Result
	pageSize     int
	queryCount   int // jobs.query calls, naming their jobs
	violations   []string
}

type table struct {
	schema    []warehouse.Field
	partition string
	rows      []map[string]any
	copied    int // rows[:copied] are on the engine
	insertIDs map[string]bool
}

type job struct {
	job       *bq.Job
	pollsLeft int
	finish    func() *bq.ErrorProto // the job's effect, when it turns DONE
	result    *Result               // a query's answer, for getQueryResults
}

type fault struct {
	status int
	after  bool
}

// Race makes another writer insert the same job ID just before ours.
type Race struct {
	Labels     map[string]string // the other writer's job labels
	SourceURIs []string          // its load's sources
	Fails      *bq.ErrorProto    // nil: its job succeeds
}

// Result is a query answer, cells nil or text (TIMESTAMP as RFC 3339).
type Result struct {
	Fields []*bq.TableFieldSchema
	Rows   [][]any
}

// Job is what Jobs reports of one job.
type Job struct {
	ID, State string               // State: RUNNING or DONE
	Config    *bq.JobConfiguration // not to be modified
	Error     *bq.ErrorProto       // a DONE job's failure
}

// New builds a fake holding every table of warehouse.Tables.
func New(opt Options) (*Fake, error) {
	if opt.Project == "" || opt.Dataset == "" || (opt.SQL != "" && opt.ViewSQL == nil) {
		return nil, fmt.Errorf("bqfake: project %q, dataset %q: want both, and ViewSQL with SQL", opt.Project, opt.Dataset)
	}
	f := &Fake{project: opt.Project, dataset: opt.Dataset, staged: opt.Staged,
		tables: map[string]*table{}, jobs: map[string]*job{}, faults: map[string][]fault{}, races: map[string]Race{},
		failJobs: map[string]*bq.ErrorProto{}, results: map[string]Result{}, pageSize: 1000}
	if f.staged == nil {
		f.staged = func(context.Context, string, string) (io.ReadCloser, error) {
			return nil, errors.New("no Options.Staged")
		}
	}
	for _, t := range warehouse.Tables() {
		f.SetTable(t)
	}
	if opt.SQL != "" {
		f.sql = &engine{base: opt.SQL, project: opt.Project, dataset: opt.Dataset, viewSQL: opt.ViewSQL, client: &http.Client{Timeout: 2 * time.Minute}}
		if err := f.sql.create(); err != nil {
			return nil, fmt.Errorf("bqfake: %w", err)
		}
	}
	return f, nil
}

// MoveSQL moves to a fresh emulator (a used one slows down).
func (f *Fake) MoveSQL(url string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := *f.sql
	e.base, e.statements = url, 0
	if err := e.create(); err != nil {
		return fmt.Errorf("bqfake: %w", err)
	}
	for _, t := range f.tables {
		t.copied = 0
	}
	f.sql = &e
	return nil
}

// Statements is how many statements the fake sent to the emulator.
func (f *Fake) Statements() (n int) {
	f.with(func() {
		if f.sql != nil {
			n = f.sql.statements
		}
	})
	return n
}

func (f *Fake) with(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// SetTable creates or replaces a table of the dataset, empty.
func (f *Fake) SetTable(t warehouse.Table) {
	f.with(func() {
		f.tables[t.Name] = &table{schema: slices.Clone(t.Schema), partition: t.PartitionField, insertIDs: map[string]bool{}}
	})
}

// DropTable deletes a table.
func (f *Fake) DropTable(name string) { f.with(func() { delete(f.tables, name) }) }

// Rows returns a table's rows, each value a string, int64, *big.Rat
// (NUMERIC), DATE or TIMESTAMP text, or nil (the fake's own maps).
func (f *Fake) Rows(tableName string) (rows []map[string]any) {
	f.with(func() {
		if t, ok := f.tables[tableName]; ok {
			rows = slices.Clone(t.rows)
		}
	})
	return rows
}

// InsertIDs returns the insertIds a table has seen, sorted.
func (f *Fake) InsertIDs(tableName string) (ids []string) {
	f.with(func() {
		if t, ok := f.tables[tableName]; ok {
			ids = slices.Sorted(maps.Keys(t.insertIDs))
		}
	})
	return ids
}

// Jobs returns every job in insertion order (dry runs are not kept).
func (f *Fake) Jobs() (out []Job) {
	f.with(func() {
		for _, id := range f.order {
			j := f.jobs[id].job
			st := j.Status
			out = append(out, Job{ID: id, State: st.State, Config: j.Configuration, Error: st.ErrorResult})
		}
	})
	return out
}

// Calls returns the requests received, as "method id" ("jobs.insert x").
func (f *Fake) Calls() (out []string) {
	f.with(func() { out = slices.Clone(f.calls) })
	return out
}

// Violations returns the rule violations seen (see the package doc).
func (f *Fake) Violations() (out []string) {
	f.with(func() { out = slices.Clone(f.violations) })
	return out
}

// FailOnViolations fails t at cleanup for every violation the fake saw.
func (f *Fake) FailOnViolations(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		for _, v := range f.Violations() {
			t.Errorf("bqfake violation: %s", v)
		}
	})
}

// Fault makes method's next request answer status, after its effect if
// after (method: jobs.insert or tabledata.insertAll).
func (f *Fake) Fault(method string, status int, after bool) {
	f.with(func() { f.faults[method] = append(f.faults[method], fault{status: status, after: after}) })
}

// Race makes another writer's job take jobID just before our insert.
func (f *Fake) Race(jobID string, r Race) { f.with(func() { f.races[jobID] = r }) }

// FailJob makes the job inserted under jobID finish with this failure.
func (f *Fake) FailJob(jobID, reason, message string) {
	f.with(func() { f.failJobs[jobID] = &bq.ErrorProto{Reason: reason, Message: message, Location: jobID} })
}

// SetRunningPolls makes later jobs RUNNING for n jobs.get calls (0: none).
func (f *Fake) SetRunningPolls(n int) { f.with(func() { f.runningPolls = n }) }

// SetPageSize sets the most rows a query answer page holds (default 1,000).
func (f *Fake) SetPageSize(n int) { f.with(func() { f.pageSize = n }) }

// Record makes queries whose SQL text is exactly sql answer r.
func (f *Fake) Record(sql string, r Result) { f.with(func() { f.results[sql] = r }) }

// SeedJob stores a finished job as if an earlier call had run it.
func (f *Fake) SeedJob(id, location string, cfg *bq.JobConfiguration, failure *bq.ErrorProto) {
	f.with(func() { f.newJob(id, location, cfg).done(failure) })
}

// Handler serves the REST API under /bigquery/v2/: mount it at the root.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		mux.HandleFunc(strings.Replace(pattern, " ", " /bigquery/v2/projects/{project}", 1), func(w http.ResponseWriter, r *http.Request) {
			if p := r.PathValue("project"); p != f.project {
				writeError(w, http.StatusNotFound, "notFound", "Not found: Project "+p)
				return
			}
			h(w, r)
		})
	}
	handle("POST /jobs", f.insertJob)
	handle("GET /jobs/{id}", f.getJob)
	handle("POST /queries", f.query)
	handle("GET /queries/{id}", f.getQueryResults)
	handle("POST /datasets/{dataset}/tables/{table}/insertAll", f.insertAll)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.with(func() {
			f.calls = append(f.calls, "unknown "+r.Method+" "+r.URL.Path)
			f.answer(w, violationf("unexpected request %s %s: the adapter uses jobs.insert/get/query/getQueryResults and tabledata.insertAll only", r.Method, r.URL.Path))
		})
	})
	return mux
}

// apiError is a 400 answer; a violation is recorded too.
type apiError struct {
	reason, msg string
	violation   bool
}

func (e *apiError) Error() string { return e.msg }

func violationf(format string, args ...any) error {
	return &apiError{reason: "invalid", msg: "bqfake: " + fmt.Sprintf(format, args...), violation: true}
}

// answer writes err as a 400 in BigQuery's shape; the caller holds mu.
func (f *Fake) answer(w http.ResponseWriter, err error) {
	e := &apiError{reason: "invalid", msg: err.Error()}
	errors.As(err, &e)
	if e.violation {
		f.violations = append(f.violations, e.msg[len("bqfake: "):])
	}
	writeError(w, http.StatusBadRequest, e.reason, e.msg)
}

// takeFault pops a method's next fault; the caller holds mu.
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
		Status:        &bq.JobStatus{State: "RUNNING"},
		Statistics:    &bq.JobStatistics{CreationTime: now, StartTime: now},
		UserEmail:     "alpipe@" + f.project + ".iam.gserviceaccount.com",
	}}
	f.jobs[id] = j
	f.order = append(f.order, id)
	return j
}

// complete turns a job DONE and applies its effect; the caller holds mu.
func (j *job) complete() {
	var failure *bq.ErrorProto
	if j.finish != nil {
		failure = j.finish()
	}
	j.done(failure)
}

func (j *job) done(failure *bq.ErrorProto) {
	j.job.Status = &bq.JobStatus{State: "DONE", ErrorResult: failure}
	if failure != nil {
		j.job.Status.Errors = []*bq.ErrorProto{failure}
	}
	j.job.Statistics.EndTime = time.Now().UnixMilli()
}

// decode reads a request body into v, answering 400 when it is no JSON;
// numbers keep their text.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	err := dec.Decode(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
	}
	return err == nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in BigQuery's error shape, which googleapi.Error parses.
func writeError(w http.ResponseWriter, status int, reason, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": message, "status": http.StatusText(status),
		"errors": []map[string]any{{"message": message, "domain": "global", "reason": reason}},
	}})
}
