package bigquery

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// fakeBigQuery is a hand-written fake of the BigQuery v2 REST API: there is
// no BigQuery emulator, so this is the one fake of the codebase. It speaks
// the parts the adapter uses (jobs.insert, jobs.get, jobs.query,
// jobs.getQueryResults, tabledata.insertAll) with the wire types of the
// generated client (google.golang.org/api/bigquery/v2) and BigQuery's error
// shapes, and it checks requests as BigQuery does:
//
//   - job IDs: letters, digits, '_' and '-', at most 1,024; a reused ID is
//     409 "Already Exists: Job <project>:<location>.<id>" (reason duplicate);
//   - jobs.get needs the job's location, or it answers 404 like a regional
//     BigQuery does;
//   - load jobs: the destination table must exist under CREATE_NEVER; the
//     source URIs must exist in staging and carry no generation; the source
//     format, dispositions and schema (names, types, modes) are recorded, and
//     the schema must match the table; every NDJSON line is parsed and
//     checked against the schema (REQUIRED fields, INT64/NUMERIC/DATE/
//     TIMESTAMP forms, unknown fields), failing the job with reason invalid;
//   - query jobs: a partition decorator must be $YYYYMMDD of a real date on
//     a DAY-partitioned table; named parameters must be used by the SQL;
//   - insertAll: rows are checked like load lines; a bad row rejects the
//     request with insertErrors (invalid, the rest stopped); insertId
//     deduplicates, and a row without one is reported as a test failure.
//
// Jobs run for a configurable number of jobs.get polls before they are
// DONE, and faults (HTTP status answers before or after the effect, races,
// failed jobs) are scripted per test. SQL is not executed: query results
// are recorded responses keyed by the SQL text.
type fakeBigQuery struct {
	t       *testing.T
	project string
	srv     *httptest.Server
	staged  func(bucket, name string) ([]byte, bool)

	mu           sync.Mutex
	tables       map[string]*fakeTable // "dataset.table"
	jobs         map[string]*fakeJob
	order        []string // job IDs in insertion order
	calls        []string // "method id" in arrival order
	faults       map[string][]fakeFault
	races        map[string]fakeRace
	failJobs     map[string]*bq.ErrorProto
	runningPolls int // jobs.get answers RUNNING this many times before DONE
	results      map[string]fakeResult
	pageSize     int
	queryCount   int
	// recordOnly keeps violations in violations instead of failing the
	// test: for tests of the fake itself.
	recordOnly bool
	violations []string
}

type fakeTable struct {
	schema    []warehouse.Field
	partition string
	rows      []map[string]any
	insertIDs map[string]bool
}

type fakeJob struct {
	job       *bq.Job
	pollsLeft int
	finish    func() *bq.ErrorProto // applied once, when the job turns DONE
	result    *fakeResult           // jobs.query
}

// fakeFault makes the next request of a method answer status: before
// touching anything, or after its effect (the job is created, the rows are
// inserted), which is what a lost response looks like to the client.
type fakeFault struct {
	status int
	after  bool
}

// fakeRace makes another writer insert the same job ID just before ours.
type fakeRace struct {
	writer string         // its label value
	fails  *bq.ErrorProto // nil: its job succeeds
}

// fakeResult is a recorded query answer: column names and wire types, and
// rows whose cells are nil (NULL) or the value's text (TIMESTAMP as RFC 3339,
// converted to the requested wire form).
type fakeResult struct {
	fields []*bq.TableFieldSchema
	rows   [][]any
}

const fakeLocation = "EU"

func newFakeBigQuery(t *testing.T, project string, staged func(bucket, name string) ([]byte, bool)) *fakeBigQuery {
	t.Helper()
	f := &fakeBigQuery{
		t:        t,
		project:  project,
		staged:   staged,
		tables:   make(map[string]*fakeTable),
		jobs:     make(map[string]*fakeJob),
		faults:   make(map[string][]fakeFault),
		races:    make(map[string]fakeRace),
		failJobs: make(map[string]*bq.ErrorProto),
		results:  make(map[string]fakeResult),
		pageSize: 1000,
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// endpoint is the base path to give option.WithEndpoint.
func (f *fakeBigQuery) endpoint() string { return f.srv.URL + "/bigquery/v2/" }

func (f *fakeBigQuery) addTable(dataset string, t warehouse.Table) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tables[dataset+"."+t.Name] = &fakeTable{schema: t.Schema, partition: t.PartitionField, insertIDs: make(map[string]bool)}
}

// violation reports a request that BigQuery would accept but that breaks a
// rule of this codebase (every job named, loads CREATE_NEVER, insertIds).
func (f *fakeBigQuery) violation(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if f.recordOnly {
		f.violations = append(f.violations, msg)
		return
	}
	f.t.Errorf("fakeBigQuery: %s", msg)
}

func (f *fakeBigQuery) fault(method string, status int, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[method] = append(f.faults[method], fakeFault{status: status, after: after})
}

func (f *fakeBigQuery) race(jobID string, r fakeRace) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.races[jobID] = r
}

func (f *fakeBigQuery) failJob(jobID, reason, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failJobs[jobID] = &bq.ErrorProto{Reason: reason, Message: message, Location: jobID}
}

func (f *fakeBigQuery) setRunningPolls(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runningPolls = n
}

func (f *fakeBigQuery) record(sql string, r fakeResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results[sql] = r
}

// seedJob stores a finished job as if an earlier call had run it.
func (f *fakeBigQuery) seedJob(id string, cfg *bq.JobConfiguration, failure *bq.ErrorProto) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.newJob(id, fakeLocation, cfg)
	j.job.Status = &bq.JobStatus{State: "DONE", ErrorResult: failure}
	if failure != nil {
		j.job.Status.Errors = []*bq.ErrorProto{failure}
	}
}

func (f *fakeBigQuery) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBigQuery) jobIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

func (f *fakeBigQuery) jobConfig(id string) *bq.JobConfiguration {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return nil
	}
	return j.job.Configuration
}

func (f *fakeBigQuery) jobState(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return ""
	}
	return j.job.Status.State
}

func (f *fakeBigQuery) tableRows(dataset, table string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tables[dataset+"."+table]
	if !ok {
		return nil
	}
	return slices.Clone(t.rows)
}

var fakePath = regexp.MustCompile(`^/bigquery/v2/projects/([^/]+)/(jobs|queries|datasets/([^/]+)/tables/([^/]+)/insertAll)(?:/([^/]+))?$`)

func (f *fakeBigQuery) serve(w http.ResponseWriter, r *http.Request) {
	m := fakePath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		f.violation("unexpected request %s %s", r.Method, r.URL)
		writeError(w, http.StatusNotFound, "notFound", "Not found: URL "+r.URL.Path)
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
		f.violation("unexpected request %s %s", r.Method, r.URL)
		writeError(w, http.StatusNotFound, "notFound", "Not found: URL "+r.URL.Path)
	}
}

// takeFault pops the next scripted fault of a method; the caller holds mu.
func (f *fakeBigQuery) takeFault(method string) (fakeFault, bool) {
	q := f.faults[method]
	if len(q) == 0 {
		return fakeFault{}, false
	}
	f.faults[method] = q[1:]
	return q[0], true
}

var jobIDChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// validJobID is BigQuery's rule, written independently of the adapter's:
// letters, digits, '_' and '-', at most 1,024 characters. (Go's regexp caps
// repeat counts at 1,000, hence the separate length check.)
func validJobID(id string) bool {
	return len(id) <= 1024 && jobIDChars.MatchString(id)
}

func (f *fakeBigQuery) insertJob(w http.ResponseWriter, r *http.Request) {
	var in bq.Job
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
		return
	}
	if in.JobReference == nil || in.JobReference.JobId == "" {
		f.violation("jobs.insert without a job ID: the adapter must name every job")
		writeError(w, http.StatusBadRequest, "invalid", "Job ID is required by this fake")
		return
	}
	id := in.JobReference.JobId

	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Configuration != nil && in.Configuration.DryRun {
		f.calls = append(f.calls, "jobs.insert(dryRun)")
		f.dryRun(w, &in)
		return
	}
	f.calls = append(f.calls, "jobs.insert "+id)
	if !validJobID(id) {
		writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("Invalid job ID %q. Job IDs must be alphanumeric (plus underscores and dashes) and must be at most 1024 characters long.", id))
		return
	}
	fault, faulty := f.takeFault("jobs.insert")
	if faulty && !fault.after {
		writeError(w, fault.status, "backendError", "Backend error (scripted)")
		return
	}
	if race, ok := f.races[id]; ok {
		// The other writer staged the same rows under its own name; the
		// fake plans its load from our copy, read now, and shows its name.
		delete(f.races, id)
		cfg := cloneConfig(in.Configuration)
		cfg.Labels = map[string]string{writerLabel: race.writer}
		var finish func() *bq.ErrorProto
		if cfg.Load != nil && race.fails == nil {
			finish, _ = f.planLoad(cfg.Load)
			load := *cfg.Load
			load.SourceUris = []string{"gs://" + race.writer + "-bucket/" + race.writer + ".ndjson"}
			cfg.Load = &load
		}
		if race.fails != nil {
			finish = func() *bq.ErrorProto { return race.fails }
		}
		j := f.newJob(id, in.JobReference.Location, cfg)
		j.pollsLeft = 2 // the other writer's job is still running when we look
		j.job.Status = &bq.JobStatus{State: "RUNNING"}
		j.finish = finish
	}
	if _, ok := f.jobs[id]; ok {
		writeError(w, http.StatusConflict, "duplicate", fmt.Sprintf("Already Exists: Job %s:%s.%s", f.project, in.JobReference.Location, id))
		return
	}
	if in.JobReference.Location == "" {
		f.violation("job %s without a location", id)
	}
	if in.JobReference.ProjectId != f.project {
		writeError(w, http.StatusBadRequest, "invalid", "Project in job reference does not match the request: "+in.JobReference.ProjectId)
		return
	}
	if in.Configuration == nil {
		writeError(w, http.StatusBadRequest, "invalid", "Job configuration is required")
		return
	}
	var finish func() *bq.ErrorProto
	var err error
	switch {
	case in.Configuration.Load != nil:
		finish, err = f.planLoad(in.Configuration.Load)
	case in.Configuration.Query != nil:
		finish, err = f.planQuery(in.Configuration.Query)
	default:
		err = fmt.Errorf("unsupported job type")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	if failure, ok := f.failJobs[id]; ok {
		finish = func() *bq.ErrorProto { return failure }
	}
	j := f.newJob(id, in.JobReference.Location, in.Configuration)
	j.finish = finish
	j.pollsLeft = f.runningPolls
	j.job.Status = &bq.JobStatus{State: "RUNNING"}
	if j.pollsLeft == 0 {
		f.complete(j)
	}
	if faulty {
		writeError(w, fault.status, "backendError", "Backend error (scripted, after the job was created)")
		return
	}
	writeJSON(w, http.StatusOK, j.job)
}

var firstKeyword = regexp.MustCompile(`^\s*([A-Za-z]+)`)

// dryRun answers a dry-run query job as BigQuery does: nothing is stored,
// and the statistics say what kind of statement the SQL is. The fake tells
// the kind from the first keyword; a SELECT must have a recorded answer,
// which stands for "the query compiles". The caller holds mu.
func (f *fakeBigQuery) dryRun(w http.ResponseWriter, in *bq.Job) {
	q := in.Configuration.Query
	if q == nil {
		writeError(w, http.StatusBadRequest, "invalid", "this fake dry-runs only queries")
		return
	}
	if err := checkParams(q.Query, q.QueryParameters); err != nil {
		writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
		return
	}
	kind := ""
	if m := firstKeyword.FindStringSubmatch(q.Query); m != nil {
		kind = strings.ToUpper(m[1])
	}
	if kind == "WITH" {
		kind = "SELECT"
	}
	if body := strings.TrimRight(strings.TrimSpace(q.Query), ";"); strings.Contains(body, ";") {
		kind = "SCRIPT"
	}
	if _, ok := f.results[q.Query]; kind == "SELECT" && !ok {
		writeError(w, http.StatusBadRequest, "invalidQuery", "this fake has no recorded answer for: "+q.Query)
		return
	}
	writeJSON(w, http.StatusOK, &bq.Job{
		Kind:          "bigquery#job",
		JobReference:  in.JobReference,
		Configuration: in.Configuration,
		Status:        &bq.JobStatus{State: "DONE"},
		Statistics:    &bq.JobStatistics{Query: &bq.JobStatistics2{StatementType: kind, TotalBytesProcessed: 1024}},
	})
}

func (f *fakeBigQuery) newJob(id, location string, cfg *bq.JobConfiguration) *fakeJob {
	now := time.Now().UnixMilli()
	j := &fakeJob{job: &bq.Job{
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
func (f *fakeBigQuery) complete(j *fakeJob) {
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

func (f *fakeBigQuery) getJob(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.get "+id)
	if fault, ok := f.takeFault("jobs.get"); ok {
		writeError(w, fault.status, "backendError", "Backend error (scripted)")
		return
	}
	j, ok := f.jobs[id]
	if !ok || r.URL.Query().Get("location") != j.job.JobReference.Location {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Job %s:%s", f.project, id))
		return
	}
	if j.job.Status.State != "DONE" {
		if j.pollsLeft > 0 {
			j.pollsLeft--
		}
		if j.pollsLeft == 0 {
			f.complete(j)
		}
	}
	writeJSON(w, http.StatusOK, j.job)
}

// planLoad checks a load configuration and returns the job's effect.
func (f *fakeBigQuery) planLoad(c *bq.JobConfigurationLoad) (func() *bq.ErrorProto, error) {
	if c.DestinationTable == nil {
		return nil, fmt.Errorf("load: destination table is required")
	}
	dst := c.DestinationTable
	if dst.ProjectId != f.project {
		return nil, fmt.Errorf("load: this fake holds only project %s, not %s", f.project, dst.ProjectId)
	}
	switch c.SourceFormat {
	case "NEWLINE_DELIMITED_JSON":
	case "", "CSV", "AVRO", "PARQUET", "ORC", "DATASTORE_BACKUP":
		return nil, fmt.Errorf("load: this fake reads only NEWLINE_DELIMITED_JSON, got %q", c.SourceFormat)
	default:
		return nil, fmt.Errorf("load: invalid source format %q", c.SourceFormat)
	}
	if len(c.SourceUris) == 0 {
		return nil, fmt.Errorf("load: source URIs are required")
	}
	switch c.WriteDisposition {
	case "", "WRITE_APPEND", "WRITE_TRUNCATE", "WRITE_EMPTY":
	default:
		return nil, fmt.Errorf("load: invalid write disposition %q", c.WriteDisposition)
	}
	switch c.CreateDisposition {
	case "", "CREATE_NEVER", "CREATE_IF_NEEDED":
	default:
		return nil, fmt.Errorf("load: invalid create disposition %q", c.CreateDisposition)
	}
	if c.Autodetect {
		return nil, fmt.Errorf("load: this fake does not detect schemas")
	}
	// The source is read and checked now, as the job starts; the rows land
	// when the job completes, atomically.
	fail := func(e *bq.ErrorProto) (func() *bq.ErrorProto, error) {
		return func() *bq.ErrorProto { return e }, nil
	}
	tableName := dst.DatasetId + "." + dst.TableId
	t, ok := f.tables[tableName]
	if !ok {
		if c.CreateDisposition != "CREATE_NEVER" {
			f.violation("load would create table %s: tables are Terraform's, loads must say CREATE_NEVER", tableName)
		}
		return fail(&bq.ErrorProto{Reason: "notFound", Message: fmt.Sprintf("Not found: Table %s:%s", f.project, tableName)})
	}
	if msg := compareSchema(t.schema, c.Schema); msg != "" {
		return fail(&bq.ErrorProto{Reason: "invalid", Message: "Provided Schema does not match Table " + f.project + ":" + tableName + ". " + msg})
	}
	var rows []map[string]any
	for _, uri := range c.SourceUris {
		bucket, name, ok := splitGSURI(uri)
		if !ok {
			return fail(&bq.ErrorProto{Reason: "invalid", Message: "Invalid source URI: " + uri})
		}
		if strings.Contains(name, "#") {
			return fail(&bq.ErrorProto{Reason: "invalid", Message: "Cloud Storage object versioning is not supported: " + uri})
		}
		data, ok := f.staged(bucket, name)
		if !ok {
			return fail(&bq.ErrorProto{Reason: "notFound", Message: "Not found: URI " + uri})
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 100<<20)
		for line := 1; sc.Scan(); line++ {
			row, err := checkJSONRow(t.schema, sc.Bytes())
			if err != nil {
				return fail(&bq.ErrorProto{Reason: "invalid", Location: uri, Message: fmt.Sprintf("Error while reading data, error message: JSON parsing error in row starting at position %d: %v", line, err)})
			}
			rows = append(rows, row)
		}
	}
	return func() *bq.ErrorProto {
		if c.WriteDisposition == "WRITE_EMPTY" && len(t.rows) > 0 {
			return &bq.ErrorProto{Reason: "duplicate", Message: fmt.Sprintf("Already Exists: Table %s:%s", f.project, tableName)}
		}
		if c.WriteDisposition == "WRITE_TRUNCATE" {
			t.rows = nil
		}
		t.rows = append(t.rows, rows...)
		return nil
	}, nil
}

// compareSchema returns why a load schema differs from the table's, or "".
// BigQuery names INT64 INTEGER on the wire and takes an empty mode as
// NULLABLE; both spellings are accepted.
func compareSchema(want []warehouse.Field, got *bq.TableSchema) string {
	if got == nil {
		return "The load has no schema."
	}
	if len(got.Fields) != len(want) {
		return fmt.Sprintf("Table has %d fields, the load %d.", len(want), len(got.Fields))
	}
	for i, w := range want {
		g := got.Fields[i]
		mode := g.Mode
		if mode == "" {
			mode = "NULLABLE"
		}
		if g.Name != w.Name || normalType(g.Type) != normalType(string(w.Type)) || mode != w.Mode {
			return fmt.Sprintf("Field %d is %s %s %s, the table has %s %s %s.", i, g.Name, g.Type, mode, w.Name, w.Type, w.Mode)
		}
	}
	return ""
}

func normalType(t string) string {
	switch t {
	case "INTEGER":
		return "INT64"
	case "FLOAT":
		return "FLOAT64"
	case "BOOLEAN":
		return "BOOL"
	}
	return t
}

func splitGSURI(uri string) (bucket, name string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "gs://")
	if !ok {
		return "", "", false
	}
	bucket, name, ok = strings.Cut(rest, "/")
	return bucket, name, ok && bucket != "" && name != ""
}

var paramRef = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)

// planQuery checks a query job; its effect is nothing (SQL is not run).
func (f *fakeBigQuery) planQuery(c *bq.JobConfigurationQuery) (func() *bq.ErrorProto, error) {
	if c.UseLegacySql == nil || *c.UseLegacySql {
		return nil, fmt.Errorf("query: this fake accepts only GoogleSQL (useLegacySql=false)")
	}
	if err := checkParams(c.Query, c.QueryParameters); err != nil {
		return nil, err
	}
	if c.DestinationTable == nil {
		return nil, nil
	}
	dst := c.DestinationTable
	base, decorator, decorated := strings.Cut(dst.TableId, "$")
	name := dst.DatasetId + "." + base
	if decorated {
		d, err := time.Parse("20060102", decorator)
		if len(decorator) != 8 || err != nil || d.Format("20060102") != decorator {
			return nil, fmt.Errorf("query: invalid partition decorator %q: want $YYYYMMDD of a real date", dst.TableId)
		}
	}
	return func() *bq.ErrorProto {
		t, ok := f.tables[name]
		if !ok {
			if c.CreateDisposition == "CREATE_NEVER" {
				return &bq.ErrorProto{Reason: "notFound", Message: fmt.Sprintf("Not found: Table %s:%s", f.project, name)}
			}
			return nil
		}
		if decorated && t.partition == "" {
			return &bq.ErrorProto{Reason: "invalid", Message: "Cannot write to a partition of the non-partitioned table " + name}
		}
		return nil
	}, nil
}

func checkParams(sql string, params []*bq.QueryParameter) error {
	used := map[string]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(sql, -1) {
		used[strings.ToLower(m[1])] = true
	}
	for _, p := range params {
		if p.Name == "" {
			return fmt.Errorf("query: positional parameters are not used here")
		}
		if !used[strings.ToLower(p.Name)] {
			return fmt.Errorf("query: parameter %s is not used by the query", p.Name)
		}
		delete(used, strings.ToLower(p.Name))
		if p.ParameterType == nil || p.ParameterValue == nil {
			return fmt.Errorf("query: parameter %s has no type or value", p.Name)
		}
		if p.ParameterType.Type == "DATE" {
			if _, err := time.Parse(time.DateOnly, p.ParameterValue.Value); err != nil {
				return fmt.Errorf("query: invalid DATE parameter %s=%q", p.Name, p.ParameterValue.Value)
			}
		}
	}
	for name := range used {
		return fmt.Errorf("query: Query parameter '%s' not found", name)
	}
	return nil
}

func (f *fakeBigQuery) query(w http.ResponseWriter, r *http.Request) {
	var in bq.QueryRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.query")
	if in.UseLegacySql == nil || *in.UseLegacySql {
		writeError(w, http.StatusBadRequest, "invalid", "this fake accepts only GoogleSQL (useLegacySql=false)")
		return
	}
	if in.DefaultDataset == nil || in.DefaultDataset.DatasetId == "" {
		f.violation("jobs.query without a default dataset")
	}
	if err := checkParams(in.Query, in.QueryParameters); err != nil {
		writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
		return
	}
	res, ok := f.results[in.Query]
	if !ok {
		writeError(w, http.StatusBadRequest, "invalidQuery", "this fake has no recorded answer for: "+in.Query)
		return
	}
	f.queryCount++
	id := fmt.Sprintf("job_fake%d", f.queryCount)
	j := f.newJob(id, in.Location, &bq.JobConfiguration{Query: &bq.JobConfigurationQuery{Query: in.Query}})
	j.result = &res
	f.complete(j)
	useInt64 := in.FormatOptions != nil && in.FormatOptions.UseInt64Timestamp
	rows, token := f.page(res, 0, 0, useInt64)
	writeJSON(w, http.StatusOK, &bq.QueryResponse{
		Kind:         "bigquery#queryResponse",
		JobReference: j.job.JobReference,
		JobComplete:  true,
		Schema:       &bq.TableSchema{Fields: res.fields},
		Rows:         rows,
		TotalRows:    uint64(len(res.rows)),
		PageToken:    token,
	})
}

func (f *fakeBigQuery) getQueryResults(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.getQueryResults "+id)
	j, ok := f.jobs[id]
	if !ok || j.result == nil || r.URL.Query().Get("location") != j.job.JobReference.Location {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Job %s:%s", f.project, id))
		return
	}
	q := r.URL.Query()
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		start, _ = strconv.Atoi(tok)
	} else if s := q.Get("startIndex"); s != "" {
		start, _ = strconv.Atoi(s)
	}
	limit, _ := strconv.Atoi(q.Get("maxResults"))
	if q.Has("maxResults") && limit == 0 {
		// maxResults=0 is how the client waits for completion without rows.
		writeJSON(w, http.StatusOK, &bq.GetQueryResultsResponse{Kind: "bigquery#getQueryResultsResponse", JobReference: j.job.JobReference, JobComplete: true, Schema: &bq.TableSchema{Fields: j.result.fields}, TotalRows: uint64(len(j.result.rows))})
		return
	}
	rows, token := f.page(*j.result, start, limit, q.Get("formatOptions.useInt64Timestamp") == "true")
	writeJSON(w, http.StatusOK, &bq.GetQueryResultsResponse{
		Kind:         "bigquery#getQueryResultsResponse",
		JobReference: j.job.JobReference,
		JobComplete:  true,
		Schema:       &bq.TableSchema{Fields: j.result.fields},
		Rows:         rows,
		TotalRows:    uint64(len(j.result.rows)),
		PageToken:    token,
	})
}

// page renders rows [start, start+n) in BigQuery's f/v form; the caller
// holds mu.
func (f *fakeBigQuery) page(res fakeResult, start, n int, int64Timestamps bool) ([]*bq.TableRow, string) {
	if n <= 0 || n > f.pageSize {
		n = f.pageSize
	}
	end := min(start+n, len(res.rows))
	var out []*bq.TableRow
	for _, row := range res.rows[start:end] {
		tr := &bq.TableRow{}
		for i, cell := range row {
			c := &bq.TableCell{}
			if s, ok := cell.(string); ok {
				c.V = wireValue(f.t, res.fields[i].Type, s, int64Timestamps)
			}
			tr.F = append(tr.F, c)
		}
		out = append(out, tr)
	}
	token := ""
	if end < len(res.rows) {
		token = strconv.Itoa(end)
	}
	return out, token
}

// wireValue converts a recorded TIMESTAMP (RFC 3339) to the form BigQuery
// sends: int64 microseconds when asked (the Go client asks), float seconds
// otherwise. Other types travel as their text.
func wireValue(t *testing.T, typ, s string, int64Timestamps bool) string {
	if typ != "TIMESTAMP" {
		return s
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("fakeBigQuery: recorded TIMESTAMP %q: %v", s, err)
		return s
	}
	if int64Timestamps {
		return strconv.FormatInt(ts.UnixMicro(), 10)
	}
	return strconv.FormatFloat(float64(ts.UnixMicro())/1e6, 'E', -1, 64)
}

func (f *fakeBigQuery) insertAll(w http.ResponseWriter, r *http.Request, dataset, table string) {
	var in bq.TableDataInsertAllRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "tabledata.insertAll "+table)
	fault, faulty := f.takeFault("tabledata.insertAll")
	if faulty && !fault.after {
		writeError(w, fault.status, "backendError", "Backend error (scripted)")
		return
	}
	t, ok := f.tables[dataset+"."+table]
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Table %s:%s.%s", f.project, dataset, table))
		return
	}
	parsed := make([]map[string]any, len(in.Rows))
	var bad []*bq.TableDataInsertAllResponseInsertErrors
	for i, row := range in.Rows {
		if row.InsertId == "" {
			f.violation("insertAll row %d of %s has no insertId: a retry could duplicate it", i, table)
		}
		raw, err := json.Marshal(row.Json)
		if err == nil {
			parsed[i], err = checkJSONRow(t.schema, raw)
		}
		if err != nil {
			bad = append(bad, &bq.TableDataInsertAllResponseInsertErrors{Index: int64(i), Errors: []*bq.ErrorProto{{Reason: "invalid", Message: err.Error()}}})
		}
	}
	if len(bad) > 0 && !in.SkipInvalidRows {
		rejected := map[int64]bool{}
		for _, b := range bad {
			rejected[b.Index] = true
		}
		for i := range in.Rows {
			if !rejected[int64(i)] {
				bad = append(bad, &bq.TableDataInsertAllResponseInsertErrors{Index: int64(i), Errors: []*bq.ErrorProto{{Reason: "stopped"}}})
			}
		}
		writeJSON(w, http.StatusOK, &bq.TableDataInsertAllResponse{Kind: "bigquery#tableDataInsertAllResponse", InsertErrors: bad})
		return
	}
	for i, row := range in.Rows {
		if parsed[i] == nil {
			continue
		}
		if row.InsertId != "" {
			if t.insertIDs[row.InsertId] {
				continue
			}
			t.insertIDs[row.InsertId] = true
		}
		t.rows = append(t.rows, parsed[i])
	}
	if faulty {
		writeError(w, fault.status, "backendError", "Backend error (scripted, after the rows were inserted)")
		return
	}
	writeJSON(w, http.StatusOK, &bq.TableDataInsertAllResponse{Kind: "bigquery#tableDataInsertAllResponse"})
}

// checkJSONRow parses one JSON row and checks it against the schema as a
// JSON load or insertAll does. It returns the row with each value in a
// canonical Go form: string, int64, *big.Rat (NUMERIC), DATE and TIMESTAMP
// as their text, nil for NULL.
func checkJSONRow(schema []warehouse.Field, line []byte) (map[string]any, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	known := map[string]bool{}
	out := make(map[string]any, len(schema))
	for _, f := range schema {
		known[f.Name] = true
		v, present := raw[f.Name]
		if !present || string(v) == "null" {
			if f.Required() {
				return nil, fmt.Errorf("Missing required field: %s.", f.Name)
			}
			out[f.Name] = nil
			continue
		}
		val, err := checkJSONValue(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", f.Name, err)
		}
		out[f.Name] = val
	}
	for name := range raw {
		if !known[name] {
			return nil, fmt.Errorf("no such field: %s.", name)
		}
	}
	return out, nil
}

var (
	intText     = regexp.MustCompile(`^-?[0-9]+$`)
	decimalText = regexp.MustCompile(`^[+-]?([0-9]+)(?:\.([0-9]*))?$`)
	// BigQuery's canonical TIMESTAMP: date, ' ' or 'T', time with up to six
	// fractional digits, and a zone (Z, UTC or ±hh:mm), or no zone (UTC).
	timestampText = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}:\d{2}(\.\d{1,6})?( ?(Z|UTC|[+-]\d{2}:\d{2}))?$`)
)

func checkJSONValue(typ warehouse.Type, v json.RawMessage) (any, error) {
	var s string
	quoted := len(v) > 0 && v[0] == '"'
	if quoted {
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
	}
	switch typ {
	case warehouse.String:
		if !quoted {
			return nil, fmt.Errorf("Cannot convert value to string: %s", v)
		}
		return s, nil
	case warehouse.Int64:
		if !quoted {
			s = string(v)
		}
		if !intText.MatchString(s) {
			return nil, fmt.Errorf("Could not parse '%s' as INT64", s)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Could not parse '%s' as INT64: out of range", s)
		}
		return n, nil
	case warehouse.Numeric:
		if !quoted {
			s = string(v) // accepted, but lossy for some values: the adapter sends strings
		}
		m := decimalText.FindStringSubmatch(s)
		if m == nil || len(strings.TrimLeft(m[1], "0")) > 29 || len(m[2]) > 9 {
			return nil, fmt.Errorf("Invalid NUMERIC value: %s", s)
		}
		r, _ := new(big.Rat).SetString(s)
		return r, nil
	case warehouse.Date:
		if !quoted {
			return nil, fmt.Errorf("Invalid date: %s", v)
		}
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, fmt.Errorf("Invalid date: '%s'", s)
		}
		return s, nil
	case warehouse.Timestamp:
		if !quoted {
			return nil, fmt.Errorf("this fake expects TIMESTAMP as a string, got %s", v)
		}
		if !timestampText.MatchString(s) {
			return nil, fmt.Errorf("Invalid timestamp: '%s'", s)
		}
		return s, nil
	}
	return nil, fmt.Errorf("this fake has no type %s", typ)
}

func cloneConfig(c *bq.JobConfiguration) *bq.JobConfiguration {
	if c == nil {
		return &bq.JobConfiguration{}
	}
	cp := *c
	return &cp
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
