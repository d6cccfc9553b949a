package bqfake

import (
	"encoding/json"
	"fmt"
	"net/http"

	bq "google.golang.org/api/bigquery/v2"
)

// MaxInsertIDLen is BigQuery's limit on an insertAll row's insertId
// ("insertId field length: 128 characters. Exceeding this value causes
// invalid errors", https://cloud.google.com/bigquery/quotas#streaming_inserts).
const MaxInsertIDLen = 128

func (f *Fake) insertAll(w http.ResponseWriter, r *http.Request, dataset, tableName string) {
	var in bq.TableDataInsertAllRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "parseError", "Parse error: "+err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "tabledata.insertAll "+tableName)
	flt, faulty := f.takeFault("tabledata.insertAll")
	if faulty && !flt.after {
		writeError(w, flt.status, "backendError", "Backend error (scripted)")
		return
	}
	t, ok := f.table(dataset, tableName)
	if !ok {
		writeError(w, http.StatusNotFound, "notFound", fmt.Sprintf("Not found: Table %s:%s.%s", f.project, dataset, tableName))
		return
	}
	for i, row := range in.Rows {
		if row.InsertId == "" {
			f.violate(w, "insertAll row %d of %s has no insertId: a retry could duplicate it", i, tableName)
			return
		}
	}
	parsed := make([]map[string]any, len(in.Rows))
	var bad []*bq.TableDataInsertAllResponseInsertErrors
	for i, row := range in.Rows {
		var err error
		if len(row.InsertId) > MaxInsertIDLen {
			err = fmt.Errorf("insertId of %d characters, more than %d", len(row.InsertId), MaxInsertIDLen)
		} else {
			var raw []byte
			raw, err = json.Marshal(row.Json)
			if err == nil {
				parsed[i], err = checkJSONRow(t.schema, raw)
			}
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
		if parsed[i] == nil || t.insertIDs[row.InsertId] {
			continue
		}
		t.insertIDs[row.InsertId] = true
		t.rows = append(t.rows, parsed[i])
	}
	if faulty {
		writeError(w, flt.status, "backendError", "Backend error (scripted, after the rows were inserted)")
		return
	}
	writeJSON(w, http.StatusOK, &bq.TableDataInsertAllResponse{Kind: "bigquery#tableDataInsertAllResponse"})
}
