package bqfake

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// engine is a BigQuery emulator serving the fake's project.
type engine struct {
	base, project, dataset string
	viewSQL                func(v warehouse.View) (string, error)
	client                 *http.Client
	statements             int
}

// call sends one request; a non-200 answer is GoogleSQL's message.
func (e *engine) call(method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, e.base+"/bigquery/v2/projects/"+e.project+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err == nil {
		defer resp.Body.Close()
		b, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return fmt.Errorf("GoogleSQL engine: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var ge struct{ Error struct{ Message string } }
		_ = json.Unmarshal(b, &ge)
		return &engineError{status: resp.StatusCode, msg: cmp.Or(ge.Error.Message, strings.TrimSpace(string(b)))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

type engineError struct {
	status int
	msg    string
}

func (e *engineError) Error() string { return e.msg }

// create makes the dataset, tables and views unless they exist: fakes may
// share one engine, as live tests share a dataset.
func (e *engine) create() error {
	err := e.call(http.MethodPost, "/datasets", &bq.Dataset{DatasetReference: &bq.DatasetReference{ProjectId: e.project, DatasetId: e.dataset}}, nil)
	if ee, ok := err.(*engineError); err != nil && (!ok || ee.status != http.StatusConflict) {
		return fmt.Errorf("create dataset %s: %w", e.dataset, err)
	}
	var list bq.TableList
	if err := e.call(http.MethodGet, "/datasets/"+e.dataset+"/tables?maxResults=1000", nil, &list); err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	exists := map[string]bool{}
	for _, t := range list.Tables {
		exists[t.TableReference.TableId] = true
	}
	create := func(t *bq.Table) error {
		if id := t.TableReference.TableId; !exists[id] {
			t.TableReference.ProjectId, t.TableReference.DatasetId = e.project, e.dataset
			if err := e.call(http.MethodPost, "/datasets/"+e.dataset+"/tables", t, nil); err != nil {
				return fmt.Errorf("create %s: %w", id, err)
			}
		}
		return nil
	}
	for _, t := range warehouse.Tables() {
		bt := &bq.Table{TableReference: &bq.TableReference{TableId: t.Name}, Schema: &bq.TableSchema{}}
		for _, f := range t.Schema {
			bt.Schema.Fields = append(bt.Schema.Fields, &bq.TableFieldSchema{Name: f.Name, Type: string(f.Type), Mode: f.Mode})
		}
		if t.PartitionField != "" {
			bt.TimePartitioning = &bq.TimePartitioning{Type: "DAY", Field: t.PartitionField}
		}
		if len(t.Clustering) > 0 {
			bt.Clustering = &bq.Clustering{Fields: t.Clustering}
		}
		if err := create(bt); err != nil {
			return err
		}
	}
	for _, v := range warehouse.Views() {
		sql, err := e.viewSQL(v)
		if err != nil {
			return fmt.Errorf("view %s: %w", v.Name, err)
		}
		if err := create(&bq.Table{TableReference: &bq.TableReference{TableId: v.Name},
			View: &bq.ViewDefinition{Query: sql, ForceSendFields: []string{"UseLegacySql"}}}); err != nil {
			return err
		}
	}
	return nil
}

// copyRows copies rows, as Rows gives them, into a table.
func (e *engine) copyRows(table string, rows []map[string]any) error {
	in := make([]*bq.TableDataInsertAllRequestRows, len(rows))
	for i, r := range rows {
		j := map[string]bq.JsonValue{}
		for k, v := range r {
			if x, ok := v.(*big.Rat); ok {
				v = x.FloatString(9)
			}
			j[k] = v
		}
		in[i] = &bq.TableDataInsertAllRequestRows{Json: j}
	}
	return e.insert(table, in)
}

func (e *engine) insert(table string, rows []*bq.TableDataInsertAllRequestRows) error {
	if len(rows) == 0 {
		return nil
	}
	var resp bq.TableDataInsertAllResponse
	err := e.call(http.MethodPost, "/datasets/"+e.dataset+"/tables/"+table+"/insertAll", &bq.TableDataInsertAllRequest{Rows: rows}, &resp)
	if err == nil && len(resp.InsertErrors) > 0 && len(resp.InsertErrors[0].Errors) > 0 {
		err = fmt.Errorf("%s", resp.InsertErrors[0].Errors[0].Message)
	}
	if err != nil {
		return fmt.Errorf("GoogleSQL engine: insertAll into %s: %w", table, err)
	}
	return nil
}

// load runs a load job on the engine, which reads the staged files itself.
func (e *engine) load(c *bq.JobConfigurationLoad) error {
	e.statements++
	id := "bqfake_load_" + rand.Text()
	var j bq.Job
	err := e.call(http.MethodPost, "/jobs", &bq.Job{JobReference: &bq.JobReference{ProjectId: e.project, JobId: id},
		Configuration: &bq.JobConfiguration{Load: c}}, &j)
	for deadline := time.Now().Add(time.Minute); err == nil && (j.Status == nil || j.Status.State != "DONE"); {
		if time.Now().After(deadline) {
			return fmt.Errorf("GoogleSQL engine: load job %s still %v after a minute", id, j.Status)
		}
		time.Sleep(10 * time.Millisecond)
		err = e.call(http.MethodGet, "/jobs/"+id, nil, &j)
	}
	if err == nil && j.Status.ErrorResult != nil {
		err = fmt.Errorf("%s", j.Status.ErrorResult.Message)
	}
	if err != nil {
		return fmt.Errorf("GoogleSQL engine: load into %s: %w", c.DestinationTable.TableId, err)
	}
	return nil
}

// remove deletes a table's rows of day ("": every row).
func (e *engine) remove(table, partition, day string) error {
	where := "TRUE"
	if day != "" {
		where = partition + " = DATE '" + day + "'"
	}
	_, err := e.query(&bq.QueryRequest{Query: "DELETE FROM `" + e.project + "." + e.dataset + "." + table + "` WHERE " + where})
	return err
}

var paramName = regexp.MustCompile(`@[A-Za-z_][A-Za-z0-9_]*\b`)

// query runs one statement. ARRAY<TIMESTAMP> parameters reach the emulator
// as ARRAY<STRING>, so they are written in as literals.
func (e *engine) query(in *bq.QueryRequest) (Result, error) {
	e.statements++
	req := &bq.QueryRequest{Query: in.Query, UseLegacySql: new(bool), ForceSendFields: []string{"UseLegacySql"},
		DefaultDataset: &bq.DatasetReference{ProjectId: e.project, DatasetId: e.dataset},
		FormatOptions:  &bq.DataFormatOptions{UseInt64Timestamp: true}, MaxResults: 100000, TimeoutMs: 60000}
	literal := map[string]string{}
	for _, p := range in.QueryParameters {
		if t := p.ParameterType; t.Type == "ARRAY" && t.ArrayType != nil && t.ArrayType.Type == "TIMESTAMP" {
			var lits []string
			for _, v := range p.ParameterValue.ArrayValues {
				lits = append(lits, "TIMESTAMP '"+v.Value+"'")
			}
			literal["@"+strings.ToLower(p.Name)] = "ARRAY<TIMESTAMP>[" + strings.Join(lits, ", ") + "]"
		} else {
			req.QueryParameters = append(req.QueryParameters, p)
		}
	}
	req.Query = paramName.ReplaceAllStringFunc(req.Query, func(ref string) string {
		if lit, ok := literal[strings.ToLower(ref)]; ok {
			return lit
		}
		return ref
	})
	var resp bq.QueryResponse
	if err := e.call(http.MethodPost, "/queries", req, &resp); err != nil {
		return Result{}, err
	}
	if resp.PageToken != "" {
		return Result{}, fmt.Errorf("GoogleSQL engine: an answer past %d rows", req.MaxResults)
	}
	res := Result{}
	if resp.Schema != nil {
		res.Fields = resp.Schema.Fields
	}
	for _, r := range resp.Rows {
		cells := make([]any, len(r.F))
		for i, c := range r.F {
			s, ok := c.V.(string) // else NULL: no nested values here
			if ok && res.Fields[i].Type == "TIMESTAMP" {
				us, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return Result{}, fmt.Errorf("GoogleSQL engine: TIMESTAMP %q: %w", s, err)
				}
				s = time.UnixMicro(us).UTC().Format(time.RFC3339Nano)
			}
			if ok {
				cells[i] = s
			}
		}
		res.Rows = append(res.Rows, cells)
	}
	return res, nil
}
