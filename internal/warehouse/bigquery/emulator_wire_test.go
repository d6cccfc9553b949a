package bigquery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// emulatorTransport counts what a BigQuery client asks of the emulator,
// and stands in for what the emulator lacks on the wire (decorate).
type emulatorTransport struct {
	next                                http.RoundTripper
	statements, dryRuns, loads, inserts atomic.Int64
	plain                               atomic.Int64 // tables decorate made
}

// jobs counts the requests that leave something behind in the emulator.
func (c *emulatorTransport) jobs() int64 {
	return c.statements.Load() + c.loads.Load() + c.inserts.Load()
}

// jobRequest is what the transport reads of jobs.insert and jobs.query.
type jobRequest struct {
	Query         string `json:"query"`
	DryRun        bool   `json:"dryRun"`
	Configuration struct {
		DryRun bool `json:"dryRun"`
		Query  *struct {
			DestinationTable *struct {
				ProjectID string `json:"projectId"`
				DatasetID string `json:"datasetId"`
				TableID   string `json:"tableId"`
			} `json:"destinationTable"`
		} `json:"query"`
		Load *struct{} `json:"load"`
	} `json:"configuration"`
}

func (c *emulatorTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	path := r.URL.Path
	if r.Method != http.MethodPost || r.Body == nil {
		return c.next.RoundTrip(r)
	}
	if strings.HasSuffix(path, "/insertAll") {
		c.inserts.Add(1)
	}
	if !strings.HasSuffix(path, "/queries") && !strings.HasSuffix(path, "/jobs") {
		return c.next.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	var req jobRequest
	if json.Unmarshal(b, &req) != nil {
		return c.next.RoundTrip(r)
	}
	switch q := req.Configuration.Query; {
	case req.Configuration.Load != nil:
		c.loads.Add(1)
	case req.Query != "" || q != nil:
		c.statements.Add(1)
		if req.DryRun || req.Configuration.DryRun {
			c.dryRuns.Add(1)
		}
		if q != nil && q.DestinationTable != nil && strings.Contains(q.DestinationTable.TableID, "$") {
			d := q.DestinationTable
			return c.decorate(r, b, d.ProjectID, d.DatasetID, d.TableID)
		}
	}
	return c.next.RoundTrip(r)
}

// decorate runs a query job whose destination is the partition
// table$YYYYMMDD with WRITE_TRUNCATE (defectDecorator): the job writes a
// new plain table instead, and once it succeeded DML replaces the date's
// rows of the table with the plain table's, as the truncation of the
// partition would. The job's answer is the emulator's.
func (c *emulatorTransport) decorate(r *http.Request, body []byte, project, dataset, decorated string) (*http.Response, error) {
	table, partition, _ := strings.Cut(decorated, "$")
	day, err := time.Parse("20060102", partition)
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", decorated, err)
	}
	t, err := warehouse.Lookup(table)
	if err != nil {
		return nil, err
	}
	plain := fmt.Sprintf("%s_%s_%d", table, partition, c.plain.Add(1))
	var job map[string]any
	if err := json.Unmarshal(body, &job); err != nil {
		return nil, err
	}
	q := job["configuration"].(map[string]any)["query"].(map[string]any)
	q["destinationTable"].(map[string]any)["tableId"] = plain
	q["writeDisposition"], q["createDisposition"] = "WRITE_EMPTY", "CREATE_IF_NEEDED"
	if body, err = json.Marshal(job); err != nil {
		return nil, err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := c.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	answer, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	if err != nil {
		return nil, err
	}
	var done struct {
		Status struct {
			ErrorResult *struct{} `json:"errorResult"`
		} `json:"status"`
	}
	if json.Unmarshal(answer, &done) != nil || done.Status.ErrorResult != nil {
		return resp, nil
	}
	cols := make([]string, len(t.Schema))
	for i, f := range t.Schema {
		cols[i] = f.Name
	}
	list := strings.Join(cols, ", ")
	name := func(table string) string { return "`" + project + "." + dataset + "." + table + "`" }
	for _, sql := range []string{
		"DELETE FROM " + name(table) + " WHERE " + t.PartitionField + " = DATE '" + day.Format(time.DateOnly) + "'",
		"INSERT INTO " + name(table) + " (" + list + ") SELECT " + list + " FROM " + name(plain),
	} {
		if err := c.exec(r, project, sql); err != nil {
			return nil, fmt.Errorf("stand-in for the partition %s: %w", decorated, err)
		}
	}
	return resp, nil
}

// exec runs one statement with jobs.query on the emulator r was sent to.
func (c *emulatorTransport) exec(r *http.Request, project, sql string) error {
	body, err := json.Marshal(map[string]any{"query": sql, "useLegacySql": false})
	if err != nil {
		return err
	}
	url := r.URL.Scheme + "://" + r.URL.Host + "/bigquery/v2/projects/" + project + "/queries"
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.statements.Add(1)
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var res struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(answer, &res) != nil || len(res.Errors) > 0 {
		return fmt.Errorf("%s: %s %s", sql, resp.Status, answer)
	}
	return nil
}
