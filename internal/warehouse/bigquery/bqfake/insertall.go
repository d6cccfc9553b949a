package bqfake

import (
	"encoding/json"
	"fmt"
	"net/http"

	bq "google.golang.org/api/bigquery/v2"
)

// MaxInsertIDLen is BigQuery's limit on an insertAll row's insertId
// (https://cloud.google.com/bigquery/quotas#streaming_inserts).
const MaxInsertIDLen = 128

func (f *Fake) insertAll(w http.ResponseWriter, r *http.Request) {
	dataset, tableName := r.PathValue("dataset"), r.PathValue("table")
	var in bq.TableDataInsertAllRequest
	if !decode(w, r, &in) {
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
	parsed := make([]map[string]any, len(in.Rows))
	var bad []*bq.TableDataInsertAllResponseInsertErrors
	for i, row := range in.Rows {
		if row.InsertId == "" {
			f.answer(w, violationf("insertAll row %d of %s has no insertId: a retry could duplicate it", i, tableName))
			return
		}
		raw, err := json.Marshal(row.Json)
		if len(row.InsertId) > MaxInsertIDLen {
			err = fmt.Errorf("insertId of %d characters, more than %d", len(row.InsertId), MaxInsertIDLen)
		} else if err == nil {
			parsed[i], err = CheckRow(t.schema, raw)
		}
		if err != nil {
			bad = append(bad, &bq.TableDataInsertAllResponseInsertErrors{Index: int64(i), Errors: []*bq.ErrorProto{{Reason: "invalid", Message: err.Error()}}})
		}
	}
	if len(bad) > 0 && !in.SkipInvalidRows {
		for i := range in.Rows { // the valid rows are not inserted either
			if parsed[i] != nil {
				bad = append(bad, &bq.TableDataInsertAllResponseInsertErrors{Index: int64(i), Errors: []*bq.ErrorProto{{Reason: "stopped"}}})
			}
		}
		writeJSON(w, http.StatusOK, &bq.TableDataInsertAllResponse{Kind: "bigquery#tableDataInsertAllResponse", InsertErrors: bad})
		return
	}
	var rows []map[string]any
	var sent []*bq.TableDataInsertAllRequestRows
	added := map[string]bool{}
	for i, row := range in.Rows {
		if id := row.InsertId; parsed[i] != nil && !t.insertIDs[id] && !added[id] {
			added[id] = true
			rows, sent = append(rows, parsed[i]), append(sent, row)
		}
	}
	if f.sql != nil { // the engine parses the rows as the adapter sent them
		err := f.flush(tableName, t)
		if err == nil {
			err = f.sql.insert(tableName, sent)
		}
		if err != nil {
			f.answer(w, err)
			return
		}
		t.copied += len(rows)
	}
	for id := range added {
		t.insertIDs[id] = true
	}
	t.rows = append(t.rows, rows...)
	if faulty {
		writeError(w, flt.status, "backendError", "Backend error (scripted, after the rows were inserted)")
		return
	}
	writeJSON(w, http.StatusOK, &bq.TableDataInsertAllResponse{Kind: "bigquery#tableDataInsertAllResponse"})
}
