package bqfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	bq "google.golang.org/api/bigquery/v2"
)

// query answers jobs.query: the recorded result of the SQL text, the
// computed one of the one SELECT form the fake executes, or an empty one.
func (f *Fake) query(w http.ResponseWriter, r *http.Request) {
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
		f.violate(w, "jobs.query without a default dataset: unqualified table names would not resolve as in DuckDB")
		return
	}
	if err := checkLabels(in.Labels); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	if err := checkParams(in.Query, in.QueryParameters); err != nil {
		writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
		return
	}
	if err := f.checkTables(in.Query, in.DefaultDataset); err != nil {
		writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
		return
	}
	res, err := f.selectAnswer(in.Query, in.QueryParameters)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalidQuery", err.Error())
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
		Schema:       &bq.TableSchema{Fields: res.Fields},
		Rows:         rows,
		TotalRows:    uint64(len(res.Rows)),
		PageToken:    token,
	})
}

func (f *Fake) getQueryResults(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "jobs.getQueryResults "+id)
	j, ok := f.jobs[id]
	if !ok || j.result == nil || r.URL.Query().Get("location") != j.job.JobReference.Location {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Job %s:%s", f.project, id))
		return
	}
	if j.job.Status.State != "DONE" {
		writeJSON(w, http.StatusOK, &bq.GetQueryResultsResponse{Kind: "bigquery#getQueryResultsResponse", JobReference: j.job.JobReference, JobComplete: false})
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
		writeJSON(w, http.StatusOK, &bq.GetQueryResultsResponse{Kind: "bigquery#getQueryResultsResponse", JobReference: j.job.JobReference, JobComplete: true, Schema: &bq.TableSchema{Fields: j.result.Fields}, TotalRows: uint64(len(j.result.Rows))})
		return
	}
	rows, token := f.page(*j.result, start, limit, q.Get("formatOptions.useInt64Timestamp") == "true")
	writeJSON(w, http.StatusOK, &bq.GetQueryResultsResponse{
		Kind:         "bigquery#getQueryResultsResponse",
		JobReference: j.job.JobReference,
		JobComplete:  true,
		Schema:       &bq.TableSchema{Fields: j.result.Fields},
		Rows:         rows,
		TotalRows:    uint64(len(j.result.Rows)),
		PageToken:    token,
	})
}

// page renders rows [start, start+n) in BigQuery's f/v form; the caller
// holds mu.
func (f *Fake) page(res Result, start, n int, int64Timestamps bool) ([]*bq.TableRow, string) {
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
				c.V = f.wireValue(res.Fields[i].Type, s, int64Timestamps)
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

// wireValue converts a recorded TIMESTAMP (RFC 3339) to the form BigQuery
// sends: int64 microseconds when asked (the Go client asks), float seconds
// otherwise. Other types travel as their text. A recorded TIMESTAMP that
// does not parse is the recorder's mistake: a violation, sent as it is.
func (f *Fake) wireValue(typ, s string, int64Timestamps bool) string {
	if typ != "TIMESTAMP" {
		return s
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		f.violations = append(f.violations, fmt.Sprintf("recorded TIMESTAMP %q: %v", s, err))
		return s
	}
	if int64Timestamps {
		return strconv.FormatInt(ts.UnixMicro(), 10)
	}
	return strconv.FormatFloat(float64(ts.UnixMicro())/1e6, 'E', -1, 64)
}
