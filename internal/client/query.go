package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// QueryRequest is the body of POST /_local/query. MaxRows asks for at most
// that many rows (0: as many as the server's cap allows); the server refuses
// a MaxRows above its cap rather than quietly sending fewer.
type QueryRequest struct {
	SQL     string `json:"sql"`
	MaxRows int64  `json:"max_rows,omitempty"`
}

// The answer to POST /_local/query is NDJSON (QueryContentType), written
// while the warehouse reads it: a head line {"columns":[...]}, one JSON
// array of cells per row, and an end line {"end":{...}} (QueryEnd). The
// status goes out with the head, so whatever stops the answer after it (a
// cap, the timeout, a failing engine) is told by the end line; an answer
// without its end line was cut on the way. Either way the reader reports
// an error, never a shorter result as if it were whole.
const QueryContentType = "application/x-ndjson"

// QueryHead is the first line of an answer.
type QueryHead struct {
	Columns []string `json:"columns"`
}

// QueryEnd is the last line of an answer, {"end":{...}}.
type QueryEnd struct {
	Rows int64 `json:"rows"`
	// More: the request's MaxRows was reached and more rows exist.
	More bool `json:"more,omitempty"`
	// Error is set when the answer was stopped before its last row; Limit
	// then names the setting that stopped it, if one did.
	Error string `json:"error,omitempty"`
	Limit string `json:"limit,omitempty"`
}

// QueryTail wraps QueryEnd on the wire, so that a reader tells it from the
// head by its key.
type QueryTail struct {
	End QueryEnd `json:"end"`
}

// QueryError is a query the server refused or could not run, before its
// answer began: Msg is the server's words (the engine's message may span
// lines, as DuckDB's caret under the SQL does). The request's plumbing is
// kept apart, in Status and Debug, so that a person reads only the reason.
type QueryError struct {
	Status int
	Msg    string
}

func (e *QueryError) Error() string { return e.Msg }

// Debug is the error with how it travelled, for logs.
func (e *QueryError) Debug() string {
	return fmt.Sprintf("POST %squery: HTTP %d: %s", AdminPrefix, e.Status, e.Msg)
}

// ErrIncomplete marks an answer that stopped before its last row.
var ErrIncomplete = errors.New("incomplete answer")

// QueryRows runs read-only SQL on the server's warehouse and hands the
// answer to sink as it arrives. It reports whether rows beyond maxRows
// exist. An answer stopped by one of the server's caps, or cut on the way,
// is an error wrapping ErrIncomplete, after sink has seen its first rows.
func (s Server) QueryRows(ctx context.Context, sql string, maxRows int64, sink warehouse.RowSink) (more bool, err error) {
	body, err := json.Marshal(QueryRequest{SQL: sql, MaxRows: maxRows})
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base()+AdminPrefix+"query", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		return false, s.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, &QueryError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
	}
	end, err := readAnswer(resp.Body, sink)
	if err != nil {
		return false, err
	}
	return end.More, nil
}

// readAnswer decodes an answer into sink and returns its end line; a
// stopped or cut answer is an error.
func readAnswer(r io.Reader, sink warehouse.RowSink) (QueryEnd, error) {
	dec := json.NewDecoder(r)
	var head QueryHead
	if err := dec.Decode(&head); err != nil {
		return QueryEnd{}, fmt.Errorf("read the answer's columns: %w", err)
	}
	if err := sink.Columns(head.Columns); err != nil {
		return QueryEnd{}, err
	}
	var n int64
	var line json.RawMessage
	var row []string
	for {
		if err := dec.Decode(&line); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return QueryEnd{}, fmt.Errorf("%w: the answer broke off after %d rows, before its end line: %w", ErrIncomplete, n, err)
		}
		if len(line) > 0 && line[0] == '{' {
			var tail QueryTail
			if err := json.Unmarshal(line, &tail); err != nil {
				return QueryEnd{}, fmt.Errorf("%w: after %d rows: bad end line: %w", ErrIncomplete, n, err)
			}
			end := tail.End
			if end.Error != "" {
				return end, fmt.Errorf("%w: %s", ErrIncomplete, end.Error)
			}
			if end.Rows != n {
				return end, fmt.Errorf("%w: the answer claims %d rows after %d", ErrIncomplete, end.Rows, n)
			}
			return end, nil
		}
		row = row[:0]
		if err := json.Unmarshal(line, &row); err != nil {
			return QueryEnd{}, fmt.Errorf("%w: row %d: %w", ErrIncomplete, n+1, err)
		}
		if err := sink.Row(row); err != nil {
			return QueryEnd{}, err
		}
		n++
	}
}

// Query runs read-only SQL on the server's warehouse and returns its whole
// answer, as many rows as the server's cap allows (more is an error).
func (s Server) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	var c warehouse.Collect
	if _, err := s.QueryRows(ctx, sql, 0, &c); err != nil {
		return warehouse.Result{}, err
	}
	return c.Result, nil
}

// Querier reads the warehouse of a running server, for code written
// against warehouse.Querier (reconcile).
type Querier struct{ Server Server }

var _ warehouse.Querier = Querier{}

func (q Querier) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	return q.Server.Query(ctx, sql)
}
