package bqfake

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"
)

var jobIDChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidJobID is BigQuery's rule, written independently of the adapter's.
func ValidJobID(id string) bool {
	return len(id) <= 1024 && jobIDChars.MatchString(id)
}

var (
	labelKey   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	labelValue = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)
)

// checkLabels is BigQuery's label rule, ASCII part.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if !labelKey.MatchString(k) || !labelValue.MatchString(v) {
			return fmt.Errorf("Invalid label key %q or label value %q: lower-case letters, digits, '_' and '-', at most 63 characters, a key starting with a letter", k, v)
		}
	}
	return nil
}

func (f *Fake) insertJob(w http.ResponseWriter, r *http.Request) {
	var in bq.Job
	if !decode(w, r, &in) {
		return
	}
	if in.Configuration == nil {
		in.Configuration = &bq.JobConfiguration{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Configuration.DryRun {
		f.calls = append(f.calls, "jobs.insert(dryRun)")
		f.dryRun(w, &in)
		return
	}
	if in.JobReference == nil || in.JobReference.JobId == "" {
		f.calls = append(f.calls, "jobs.insert")
		f.answer(w, violationf("jobs.insert without a job ID: the adapter must name every job"))
		return
	}
	id, location := in.JobReference.JobId, in.JobReference.Location
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
		writeError(w, http.StatusConflict, "duplicate", fmt.Sprintf("Already Exists: Job %s:%s.%s", f.project, location, id))
		return
	}
	if location == "" {
		f.answer(w, violationf("job %s without a location: jobs.get could not find it outside the US and EU multi-regions", id))
		return
	}
	if err := checkLabels(in.Configuration.Labels); err != nil {
		f.answer(w, err)
		return
	}
	var finish func() *bq.ErrorProto
	var result *Result
	var err error
	switch c := in.Configuration; {
	case c.Load != nil:
		finish, err = f.planLoad(r.Context(), c.Load)
	case c.Query != nil:
		finish, result, err = f.planQuery(c.Query)
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
	j := f.newJob(id, location, in.Configuration)
	j.finish, j.result, j.pollsLeft = finish, result, f.runningPolls
	if j.pollsLeft == 0 {
		j.complete()
	}
	if faulty {
		writeError(w, flt.status, "backendError", "Backend error (scripted, after the job was created)")
		return
	}
	writeJSON(w, http.StatusOK, j.job)
}

// runRace inserts the other writer's running job, loading our rows under
// its own sources. The caller holds mu.
func (f *Fake) runRace(ctx context.Context, id string, in *bq.Job, race Race) {
	cfg := *in.Configuration
	cfg.Labels = race.Labels
	finish := func() *bq.ErrorProto { return race.Fails }
	if cfg.Load != nil && race.Fails == nil {
		finish, _ = f.planLoad(ctx, cfg.Load)
		load := *cfg.Load
		load.SourceUris = race.SourceURIs
		cfg.Load = &load
	}
	j := f.newJob(id, in.JobReference.Location, &cfg)
	j.pollsLeft, j.finish = 2, finish // still running when we look
}

var firstKeyword = regexp.MustCompile(`^\s*[A-Za-z]+`)

// dryRun tells the statement type by the first keyword (the emulator
// always says SELECT); the caller holds mu.
func (f *Fake) dryRun(w http.ResponseWriter, in *bq.Job) {
	q := in.Configuration.Query
	if q == nil {
		writeError(w, http.StatusBadRequest, "invalid", "this fake dry-runs only queries")
		return
	}
	kind := strings.ToUpper(strings.TrimSpace(firstKeyword.FindString(q.Query)))
	if kind == "WITH" {
		kind = "SELECT"
	}
	if strings.Contains(strings.TrimRight(strings.TrimSpace(q.Query), ";"), ";") {
		kind = "SCRIPT"
	}
	writeJSON(w, http.StatusOK, &bq.Job{Kind: "bigquery#job", JobReference: in.JobReference, Configuration: in.Configuration,
		Status:     &bq.JobStatus{State: "DONE"},
		Statistics: &bq.JobStatistics{Query: &bq.JobStatistics2{StatementType: kind, TotalBytesProcessed: 1024}}})
}

func (f *Fake) getJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.get "+id)
	j, ok := f.jobs[id]
	if !ok || r.URL.Query().Get("location") != j.job.JobReference.Location {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Job %s:%s", f.project, id))
		return
	}
	if j.job.Status.State != "DONE" {
		j.pollsLeft = max(j.pollsLeft-1, 0)
		if j.pollsLeft == 0 {
			j.complete()
		}
	}
	writeJSON(w, http.StatusOK, j.job)
}

// planLoad checks a load and its lines, returning its effect: the rows
// land atomically when the job completes; the caller holds mu.
func (f *Fake) planLoad(ctx context.Context, c *bq.JobConfigurationLoad) (func() *bq.ErrorProto, error) {
	dst := c.DestinationTable
	switch {
	case dst == nil || dst.ProjectId != f.project:
		return nil, fmt.Errorf("load: the destination must be a table of project %s", f.project)
	case c.SourceFormat != "NEWLINE_DELIMITED_JSON" || c.Autodetect:
		return nil, fmt.Errorf("load: this fake reads only NEWLINE_DELIMITED_JSON with a schema, got %q", c.SourceFormat)
	case c.CreateDisposition != "CREATE_NEVER":
		return nil, violationf("load into %s.%s may create the table (create disposition %q): tables are Terraform's, loads must say CREATE_NEVER", dst.DatasetId, dst.TableId, c.CreateDisposition)
	case c.WriteDisposition != "" && c.WriteDisposition != "WRITE_APPEND":
		return nil, fmt.Errorf("load: this fake only appends, got %q", c.WriteDisposition)
	}
	fail := func(e *bq.ErrorProto) (func() *bq.ErrorProto, error) {
		return func() *bq.ErrorProto { return e }, nil
	}
	name := f.project + ":" + dst.DatasetId + "." + dst.TableId
	t, ok := f.table(dst.DatasetId, dst.TableId)
	if !ok {
		return fail(&bq.ErrorProto{Reason: "notFound", Message: "Not found: Table " + name})
	}
	if msg := compareSchema(t.schema, c.Schema); msg != "" {
		return fail(&bq.ErrorProto{Reason: "invalid", Message: "Provided Schema does not match Table " + name + ". " + msg})
	}
	var rows []map[string]any
	for _, uri := range c.SourceUris {
		read, e := f.readStaged(ctx, t, uri)
		if e != nil {
			return fail(e)
		}
		rows = append(rows, read...)
	}
	return func() *bq.ErrorProto {
		if f.sql != nil { // the engine reads the files the adapter staged
			err := f.flush(dst.TableId, t)
			if err == nil {
				err = f.sql.load(c)
			}
			if err != nil {
				return &bq.ErrorProto{Reason: "invalid", Message: err.Error()}
			}
			t.copied += len(rows)
		}
		t.rows = append(t.rows, rows...)
		return nil
	}, nil
}

func (f *Fake) readStaged(ctx context.Context, t *table, uri string) ([]map[string]any, *bq.ErrorProto) {
	bucket, name, _ := strings.Cut(strings.TrimPrefix(uri, "gs://"), "/")
	rc, err := f.staged(ctx, bucket, name)
	if err != nil {
		return nil, &bq.ErrorProto{Reason: "notFound", Message: "Not found: URI " + uri + " (" + err.Error() + ")"}
	}
	defer rc.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 100<<20)
	for line := 1; sc.Scan(); line++ {
		row, err := CheckRow(t.schema, sc.Bytes())
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

// table looks a table up; the caller holds mu.
func (f *Fake) table(dataset, name string) (*table, bool) {
	t, ok := f.tables[name]
	return t, ok && dataset == f.dataset
}

var minPartition, maxPartition = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2159, 12, 31, 0, 0, 0, 0, time.UTC)

// planQuery checks a query job, returning its answer or, with a
// destination, its effect; the caller holds mu.
func (f *Fake) planQuery(c *bq.JobConfigurationQuery) (func() *bq.ErrorProto, *Result, error) {
	if c.UseLegacySql == nil || *c.UseLegacySql {
		return nil, nil, fmt.Errorf("query: this fake accepts only GoogleSQL (useLegacySql=false)")
	}
	if err := checkParams(c.Query, c.QueryParameters); err != nil {
		return nil, nil, err
	}
	dst := c.DestinationTable
	if dst == nil {
		res, err := f.selectAnswer(c.Query, c.QueryParameters)
		return nil, &res, err
	}
	base, decorator, decorated := strings.Cut(dst.TableId, "$")
	day := ""
	if decorated {
		d, err := time.Parse("20060102", decorator)
		if len(decorator) != 8 || err != nil {
			return nil, nil, fmt.Errorf("query: invalid partition decorator %q: want $YYYYMMDD of a real date", dst.TableId)
		}
		if d.Before(minPartition) || d.After(maxPartition) {
			return nil, nil, fmt.Errorf("query: partition decorator %q is outside the DAY partition range 1960-01-01..2159-12-31", dst.TableId)
		}
		day = d.Format(time.DateOnly)
	}
	if c.CreateDisposition != "CREATE_NEVER" {
		return nil, nil, violationf("query job writing %s.%s may create the table (create disposition %q): tables are Terraform's, jobs must say CREATE_NEVER", dst.DatasetId, dst.TableId, c.CreateDisposition)
	}
	if c.WriteDisposition != "WRITE_TRUNCATE" && c.WriteDisposition != "WRITE_APPEND" {
		return nil, nil, fmt.Errorf("query: this fake writes only WRITE_TRUNCATE or WRITE_APPEND, got %q", c.WriteDisposition)
	}
	return func() *bq.ErrorProto {
		t, ok := f.table(dst.DatasetId, base)
		if !ok {
			return &bq.ErrorProto{Reason: "notFound", Message: fmt.Sprintf("Not found: Table %s:%s.%s", f.project, dst.DatasetId, base)}
		}
		return f.writeQuery(c, t, base, day)
	}, nil, nil
}

// writeQuery writes an answer into t, a day's WRITE_TRUNCATE replacing
// that date's rows only; the caller holds mu.
func (f *Fake) writeQuery(c *bq.JobConfigurationQuery, t *table, name, day string) *bq.ErrorProto {
	if f.sql == nil {
		return nil
	}
	res, err := f.selectAnswer(c.Query, c.QueryParameters)
	if err != nil {
		return &bq.ErrorProto{Reason: "invalidQuery", Message: err.Error()}
	}
	rows, err := res.rows(t.schema)
	if err != nil {
		return &bq.ErrorProto{Reason: "invalid", Message: "Query answer does not fit table " + name + ": " + err.Error()}
	}
	inDay := func(r map[string]any) bool { return day == "" || strings.HasPrefix(fmt.Sprint(r[t.partition]), day) }
	if slices.ContainsFunc(rows, func(r map[string]any) bool { return !inDay(r) }) {
		return &bq.ErrorProto{Reason: "invalid", Message: "Some rows belong to different partitions rather than destination partition " + strings.ReplaceAll(day, "-", "")}
	}
	if c.WriteDisposition == "WRITE_TRUNCATE" { // selectAnswer copied every row: delete here and there
		t.rows = slices.DeleteFunc(t.rows, inDay)
		t.copied = len(t.rows)
		if err := f.sql.remove(name, t.partition, day); err != nil {
			return &bq.ErrorProto{Reason: "backendError", Message: err.Error()}
		}
	}
	t.rows = append(t.rows, rows...)
	return nil
}

var (
	paramRef = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)
	// Comments and string literals, where a parameter does not count.
	notCode = regexp.MustCompile(`(?s)--[^\n]*|#[^\n]*|/\*.*?\*/|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"`)
)

// checkParams refuses parameters the SQL does not use, as BigQuery does.
func checkParams(sql string, params []*bq.QueryParameter) error {
	used := map[string]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(notCode.ReplaceAllString(sql, " "), -1) {
		used[strings.ToLower(m[1])] = true
	}
	for _, p := range params {
		if !used[strings.ToLower(p.Name)] || p.ParameterType == nil || p.ParameterValue == nil {
			return &apiError{reason: "invalidQuery", msg: fmt.Sprintf("query: parameter %q is not used by the query, or has no type or value", p.Name)}
		}
	}
	return nil
}
