package bqfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func (f *Fake) query(w http.ResponseWriter, r *http.Request) {
	var in bq.QueryRequest
	if !decode(w, r, &in) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.query")
	var res *Result
	err := checkLabels(in.Labels)
	switch {
	case in.DefaultDataset == nil || in.DefaultDataset.DatasetId == "":
		err = violationf("jobs.query without a default dataset: unqualified table names would not resolve as in DuckDB")
	case err == nil:
		_, res, err = f.planQuery(&bq.JobConfigurationQuery{Query: in.Query, UseLegacySql: in.UseLegacySql,
			QueryParameters: in.QueryParameters})
	}
	if err != nil {
		f.answer(w, err)
		return
	}
	f.queryCount++
	j := f.newJob(fmt.Sprintf("job_fake%d", f.queryCount), in.Location, &bq.JobConfiguration{Query: &bq.JobConfigurationQuery{Query: in.Query}})
	j.result = res
	j.complete()
	rows, token := f.page(*res, 0, 0)
	writeJSON(w, http.StatusOK, &bq.QueryResponse{Kind: "bigquery#queryResponse", JobReference: j.job.JobReference, JobComplete: true,
		Schema: &bq.TableSchema{Fields: res.Fields}, Rows: rows, TotalRows: uint64(len(res.Rows)), PageToken: token})
}

// selectAnswer answers a SELECT; the caller holds mu.
func (f *Fake) selectAnswer(sql string, params []*bq.QueryParameter) (Result, error) {
	if res, ok := f.results[sql]; ok || f.sql == nil {
		return res, nil
	}
	for name, t := range f.tables {
		if err := f.flush(name, t); err != nil {
			return Result{}, err
		}
	}
	res, err := f.sql.query(&bq.QueryRequest{Query: sql, QueryParameters: params})
	if err != nil {
		return Result{}, &apiError{reason: "invalidQuery", msg: err.Error()}
	}
	// The emulator computes NUMERIC past its range; BigQuery fails the query.
	for _, row := range res.Rows {
		for i, cell := range row {
			if s, ok := cell.(string); ok && res.Fields[i].Type == "NUMERIC" {
				if _, err := checkValue(warehouse.Numeric, []byte(strconv.Quote(s))); err != nil {
					return Result{}, &apiError{reason: "invalidQuery", msg: fmt.Sprintf("numeric overflow: %s does not fit NUMERIC (column %s)", s, res.Fields[i].Name)}
				}
			}
		}
	}
	return res, nil
}

// flush copies the rows of t not yet on the engine; the caller holds mu
// and checked f.sql.
func (f *Fake) flush(name string, t *table) error {
	if err := f.sql.copyRows(name, t.rows[t.copied:]); err != nil {
		return err
	}
	t.copied = len(t.rows)
	return nil
}

// Query runs a SELECT on GoogleSQL for a test; rows as Rows gives them.
func (f *Fake) Query(sql string) ([]map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sql == nil {
		return nil, fmt.Errorf("bqfake: no GoogleSQL engine (Options.SQL) to run %q", sql)
	}
	res, err := f.selectAnswer(sql, nil)
	if err != nil {
		return nil, err
	}
	schema := make([]warehouse.Field, len(res.Fields))
	for i, fl := range res.Fields {
		schema[i] = warehouse.Field{Name: fl.Name, Type: warehouse.Type(normalType(fl.Type))}
	}
	return res.rows(schema)
}

// rows converts an answer to the form Rows gives.
func (res Result) rows(schema []warehouse.Field) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(res.Rows))
	for _, cells := range res.Rows {
		line := map[string]any{}
		for i, fl := range res.Fields {
			line[fl.Name] = cells[i]
		}
		b, _ := json.Marshal(line)
		r, err := CheckRow(schema, b)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *Fake) getQueryResults(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.getQueryResults "+id)
	j, ok := f.jobs[id]
	if !ok || j.result == nil || r.URL.Query().Get("location") != j.job.JobReference.Location {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Job %s:%s", f.project, id))
		return
	}
	resp := &bq.GetQueryResultsResponse{Kind: "bigquery#getQueryResultsResponse", JobReference: j.job.JobReference}
	q := r.URL.Query()
	// maxResults=0 is how the client waits for completion without rows.
	if resp.JobComplete = j.job.Status.State == "DONE"; resp.JobComplete {
		resp.Schema, resp.TotalRows = &bq.TableSchema{Fields: j.result.Fields}, uint64(len(j.result.Rows))
		if limit, _ := strconv.Atoi(q.Get("maxResults")); limit > 0 || !q.Has("maxResults") {
			start, _ := strconv.Atoi(q.Get("startIndex"))
			if tok := q.Get("pageToken"); tok != "" {
				start, _ = strconv.Atoi(tok)
			}
			resp.Rows, resp.PageToken = f.page(*j.result, start, limit)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// page renders rows [start, start+n), TIMESTAMP in microseconds (as the
// client asks); the caller holds mu.
func (f *Fake) page(res Result, start, n int) ([]*bq.TableRow, string) {
	if n <= 0 || n > f.pageSize {
		n = f.pageSize
	}
	start = min(max(start, 0), len(res.Rows))
	end := min(start+n, len(res.Rows))
	var out []*bq.TableRow
	for _, row := range res.Rows[start:end] {
		tr := &bq.TableRow{}
		for i, cell := range row {
			c := &bq.TableCell{}
			if s, ok := cell.(string); ok {
				c.V = s
				if ts, err := time.Parse(time.RFC3339Nano, s); err == nil && res.Fields[i].Type == "TIMESTAMP" {
					c.V = strconv.FormatInt(ts.UnixMicro(), 10)
				}
			}
			tr.F = append(tr.F, c)
		}
		out = append(out, tr)
	}
	token := ""
	if end < len(res.Rows) {
		token = strconv.Itoa(end)
	}
	return out, token
}
