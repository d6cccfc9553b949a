package bqfake

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"
)

var jobIDChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidJobID is BigQuery's rule, written independently of the adapter's:
// letters, digits, '_' and '-', at most 1,024 characters. (Go's regexp caps
// repeat counts at 1,000, hence the separate length check.)
func ValidJobID(id string) bool {
	return len(id) <= 1024 && jobIDChars.MatchString(id)
}

var (
	labelKey   = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	labelValue = regexp.MustCompile(`^[a-z0-9_-]*$`)
)

// checkLabels is BigQuery's label rule (ASCII part; BigQuery also allows
// international lower-case letters, which this codebase does not use):
// keys and values at most 63 characters, keys starting with a letter.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if len(k) > 63 || !labelKey.MatchString(k) {
			return fmt.Errorf("Invalid label key %q: keys must start with a lower-case letter, hold only lower-case letters, digits, '_' and '-', and be at most 63 characters", k)
		}
		if len(v) > 63 || !labelValue.MatchString(v) {
			return fmt.Errorf("Invalid label value %q for key %q: values hold only lower-case letters, digits, '_' and '-', and are at most 63 characters", v, k)
		}
	}
	return nil
}

func (f *Fake) insertJob(w http.ResponseWriter, r *http.Request) {
	var in bq.Job
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Configuration != nil && in.Configuration.DryRun {
		f.calls = append(f.calls, "jobs.insert(dryRun)")
		f.dryRun(w, &in)
		return
	}
	if in.JobReference == nil || in.JobReference.JobId == "" {
		f.calls = append(f.calls, "jobs.insert")
		f.violate(w, "jobs.insert without a job ID: the adapter must name every job")
		return
	}
	id := in.JobReference.JobId
	f.calls = append(f.calls, "jobs.insert "+id)
	if !ValidJobID(id) {
		writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("Invalid job ID %q. Job IDs must be alphanumeric (plus underscores and dashes) and must be at most 1024 characters long.", id))
		return
	}
	flt, faulty := f.takeFault("jobs.insert")
	if faulty && !flt.after {
		writeError(w, flt.status, "backendError", "Backend error (scripted)")
		return
	}
	if race, ok := f.races[id]; ok {
		delete(f.races, id)
		f.runRace(r.Context(), id, &in, race)
	}
	if _, ok := f.jobs[id]; ok {
		writeError(w, http.StatusConflict, "duplicate", fmt.Sprintf("Already Exists: Job %s:%s.%s", f.project, in.JobReference.Location, id))
		return
	}
	if in.JobReference.Location == "" {
		f.violate(w, "job %s without a location: jobs.get could not find it outside the US and EU multi-regions", id)
		return
	}
	if in.JobReference.ProjectId != f.project {
		writeError(w, http.StatusBadRequest, "invalid", "Project in job reference does not match the request: "+in.JobReference.ProjectId)
		return
	}
	if in.Configuration == nil {
		writeError(w, http.StatusBadRequest, "invalid", "Job configuration is required")
		return
	}
	if err := checkLabels(in.Configuration.Labels); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	var finish func() *bq.ErrorProto
	var result *Result
	var err error
	switch {
	case in.Configuration.Load != nil:
		finish, err = f.planLoad(r.Context(), in.Configuration.Load)
	case in.Configuration.Query != nil:
		finish, result, err = f.planQuery(in.Configuration.Query)
	default:
		err = fmt.Errorf("unsupported job type")
	}
	if err != nil {
		f.answer(w, err)
		return
	}
	if failure, ok := f.failJobs[id]; ok {
		finish = func() *bq.ErrorProto { return failure }
	}
	j := f.newJob(id, in.JobReference.Location, in.Configuration)
	j.finish = finish
	j.result = result
	j.pollsLeft = f.runningPolls
	j.job.Status = &bq.JobStatus{State: "RUNNING"}
	if j.pollsLeft == 0 {
		f.complete(j)
	}
	if faulty {
		writeError(w, flt.status, "backendError", "Backend error (scripted, after the job was created)")
		return
	}
	writeJSON(w, http.StatusOK, j.job)
}

// runRace inserts the other writer's job under id, still running; the
// caller holds mu. Its load is planned from our request (the other writer
// staged the same rows under its own name) but shows its own sources.
func (f *Fake) runRace(ctx context.Context, id string, in *bq.Job, race Race) {
	cfg := &bq.JobConfiguration{}
	if in.Configuration != nil {
		*cfg = *in.Configuration
	}
	cfg.Labels = race.Labels
	var finish func() *bq.ErrorProto
	if cfg.Load != nil && race.Fails == nil {
		finish, _ = f.planLoad(ctx, cfg.Load)
		if race.SourceURIs != nil {
			load := *cfg.Load
			load.SourceUris = race.SourceURIs
			cfg.Load = &load
		}
	}
	if race.Fails != nil {
		finish = func() *bq.ErrorProto { return race.Fails }
	}
	location := ""
	if in.JobReference != nil {
		location = in.JobReference.Location
	}
	j := f.newJob(id, location, cfg)
	j.pollsLeft = 2 // the other writer's job is still running when we look
	j.job.Status = &bq.JobStatus{State: "RUNNING"}
	j.finish = finish
}

var firstKeyword = regexp.MustCompile(`^\s*([A-Za-z]+)`)

// dryRun answers a dry-run query job as BigQuery does: nothing is stored,
// and the statistics say what kind of statement the SQL is. The fake tells
// the kind from the first keyword, and checks parameters and the tables a
// SELECT reads. The caller holds mu.
func (f *Fake) dryRun(w http.ResponseWriter, in *bq.Job) {
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
	if kind == "SELECT" {
		if err := f.checkTables(q.Query, q.DefaultDataset); err != nil {
			writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, &bq.Job{
		Kind:          "bigquery#job",
		JobReference:  in.JobReference,
		Configuration: in.Configuration,
		Status:        &bq.JobStatus{State: "DONE"},
		Statistics:    &bq.JobStatistics{Query: &bq.JobStatistics2{StatementType: kind, TotalBytesProcessed: 1024}},
	})
}

func (f *Fake) getJob(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.get "+id)
	if flt, ok := f.takeFault("jobs.get"); ok {
		writeError(w, flt.status, "backendError", "Backend error (scripted)")
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

// planLoad checks a load configuration and returns the job's effect; the
// caller holds mu. The sources are read and checked now, as the job starts;
// the rows land when the job completes, atomically.
func (f *Fake) planLoad(ctx context.Context, c *bq.JobConfigurationLoad) (func() *bq.ErrorProto, error) {
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
	case "CREATE_NEVER":
	case "", "CREATE_IF_NEEDED":
		return nil, violationf("load into %s.%s may create the table (create disposition %q): tables are Terraform's, loads must say CREATE_NEVER", dst.DatasetId, dst.TableId, c.CreateDisposition)
	default:
		return nil, fmt.Errorf("load: invalid create disposition %q", c.CreateDisposition)
	}
	if c.Autodetect {
		return nil, fmt.Errorf("load: this fake does not detect schemas")
	}
	fail := func(e *bq.ErrorProto) (func() *bq.ErrorProto, error) {
		return func() *bq.ErrorProto { return e }, nil
	}
	tableName := dst.DatasetId + "." + dst.TableId
	t, ok := f.table(dst.DatasetId, dst.TableId)
	if !ok {
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
		read, e := f.readStaged(ctx, t, uri, bucket, name)
		if e != nil {
			return fail(e)
		}
		rows = append(rows, read...)
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

// readStaged streams one staged NDJSON file and checks every line.
func (f *Fake) readStaged(ctx context.Context, t *table, uri, bucket, name string) ([]map[string]any, *bq.ErrorProto) {
	if f.staged == nil {
		return nil, &bq.ErrorProto{Reason: "notFound", Message: "Not found: URI " + uri + " (bqfake: Options.Staged is nil)"}
	}
	rc, err := f.staged(ctx, bucket, name)
	if err != nil {
		return nil, &bq.ErrorProto{Reason: "notFound", Message: "Not found: URI " + uri + " (" + err.Error() + ")"}
	}
	defer rc.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 100<<20)
	for line := 1; sc.Scan(); line++ {
		row, err := checkJSONRow(t.schema, sc.Bytes())
		if err != nil {
			return nil, &bq.ErrorProto{Reason: "invalid", Location: uri, Message: fmt.Sprintf("Error while reading data, error message: JSON parsing error in row starting at position %d: %v", line, err)}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, &bq.ErrorProto{Reason: "backendError", Location: uri, Message: "Error while reading data: " + err.Error()}
	}
	return rows, nil
}

// table looks up a table of the fake's dataset; the caller holds mu.
func (f *Fake) table(dataset, name string) (*table, bool) {
	if dataset != f.dataset {
		return nil, false
	}
	t, ok := f.tables[name]
	return t, ok
}

func splitGSURI(uri string) (bucket, name string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "gs://")
	if !ok {
		return "", "", false
	}
	bucket, name, ok = strings.Cut(rest, "/")
	return bucket, name, ok && bucket != "" && name != ""
}

// planQuery checks a query job and returns its effect: nothing, since SQL
// is not run beyond one SELECT form (see the package doc); the caller holds
// mu. A SELECT without a destination keeps its answer (recorded, computed
// or empty) for getQueryResults.
func (f *Fake) planQuery(c *bq.JobConfigurationQuery) (func() *bq.ErrorProto, *Result, error) {
	if c.UseLegacySql == nil || *c.UseLegacySql {
		return nil, nil, fmt.Errorf("query: this fake accepts only GoogleSQL (useLegacySql=false)")
	}
	if err := checkParams(c.Query, c.QueryParameters); err != nil {
		return nil, nil, &reasonError{reason: "invalidQuery", msg: err.Error()}
	}
	if err := f.checkTables(c.Query, c.DefaultDataset); err != nil {
		return nil, nil, &reasonError{reason: "invalidQuery", msg: err.Error()}
	}
	if c.DestinationTable == nil {
		res, err := f.selectAnswer(c.Query, c.QueryParameters)
		if err != nil {
			return nil, nil, &reasonError{reason: "invalidQuery", msg: err.Error()}
		}
		return nil, &res, nil
	}
	dst := c.DestinationTable
	base, decorator, decorated := strings.Cut(dst.TableId, "$")
	name := dst.DatasetId + "." + base
	if decorated {
		d, err := time.Parse("20060102", decorator)
		if len(decorator) != 8 || err != nil || d.Format("20060102") != decorator {
			return nil, nil, fmt.Errorf("query: invalid partition decorator %q: want $YYYYMMDD of a real date", dst.TableId)
		}
		if d.Before(minPartition) || d.After(maxPartition) {
			return nil, nil, fmt.Errorf("query: partition decorator %q is outside the DAY partition range 1960-01-01..2159-12-31", dst.TableId)
		}
	}
	if c.CreateDisposition != "CREATE_NEVER" {
		return nil, nil, violationf("query job writing %s.%s may create the table (create disposition %q): tables are Terraform's, jobs must say CREATE_NEVER", c.DestinationTable.DatasetId, c.DestinationTable.TableId, c.CreateDisposition)
	}
	if c.CreateDisposition != "CREATE_NEVER" {
		return nil, nil, violationf("query job writing %s.%s may create the table (create disposition %q): tables are Terraform's, jobs must say CREATE_NEVER", c.DestinationTable.DatasetId, c.DestinationTable.TableId, c.CreateDisposition)
	}
	switch c.WriteDisposition {
	case "", "WRITE_APPEND", "WRITE_TRUNCATE", "WRITE_EMPTY":
	default:
		return nil, nil, fmt.Errorf("query: invalid write disposition %q", c.WriteDisposition)
	}
	var apply func()
	if dst.DatasetId == f.dataset {
		var err error
		if apply, err = f.refreshModel(c, base, decorator); err != nil {
			return nil, nil, err
		}
	}
	return func() *bq.ErrorProto {
		t, ok := f.table(dst.DatasetId, base)
		if !ok {
			return &bq.ErrorProto{Reason: "notFound", Message: fmt.Sprintf("Not found: Table %s:%s", f.project, name)}
		}
		if decorated && t.partition == "" {
			return &bq.ErrorProto{Reason: "invalid", Message: "Cannot write to a partition of the non-partitioned table " + name}
		}
		if apply != nil {
			apply()
		}
		return nil
	}, nil, nil
}

// The range of DAY partitions BigQuery accepts.
var (
	minPartition = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	maxPartition = time.Date(2159, 12, 31, 0, 0, 0, 0, time.UTC)
)

var paramRef = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)

func checkParams(sql string, params []*bq.QueryParameter) error {
	used := map[string]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(stripLiterals(sql), -1) {
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
