package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// QueryError is a query the server refused or could not run, before its
// answer began: Msg is the server's words (the engine's message may span
// lines, as DuckDB's caret under the SQL does). The HTTP status is kept
// apart, so that a person reads only the reason.
type QueryError struct {
	Status int
	Msg    string
}

func (e *QueryError) Error() string { return e.Msg }

// QueryRows runs read-only SQL on the server's warehouse and hands the
// answer to sink as it arrives. It reports whether rows beyond maxRows
// exist. An answer stopped by one of the server's caps, or cut on the way,
// is an error wrapping localapi.ErrIncomplete, after sink has seen its
// first rows.
func (s Server) QueryRows(ctx context.Context, sql string, maxRows int64, sink warehouse.RowSink) (more bool, err error) {
	body, err := json.Marshal(localapi.QueryRequest{SQL: sql, MaxRows: maxRows})
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base()+localapi.QueryPath, bytes.NewReader(body))
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
	end, err := localapi.ReadAnswer(resp.Body, sink)
	if err != nil {
		return false, err
	}
	return end.More, nil
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

var selectLike = regexp.MustCompile(`(?is)^\s*(select|with|from|values|table)\b`)

// QueryTyped runs sql (one statement) into the sink newSink makes, with at
// most max rows (0: as many as the server's cap allows), and reports
// whether more exist. newSink is given the answer's column names and
// warehouse types, from DESCRIBE, so that numbers can print as numbers and
// money with its scale; both are nil when the warehouse cannot describe
// the statement (SHOW, DESCRIBE ...). The statement is sent once: the
// server wraps it in the LIMIT the answer needs and falls back to it as
// sent, so a second try here would only run a refused or timed-out query
// again. The server bounds every answer: one it stopped (a cap, its
// timeout) is an error wrapping localapi.ErrIncomplete.
func (s Server) QueryTyped(ctx context.Context, sql string, max int, newSink func(names, types []string) warehouse.RowSink) (more bool, err error) {
	var names, types []string
	if selectLike.MatchString(sql) {
		if d, err := s.Query(ctx, "DESCRIBE "+sql); err == nil {
			names, types = described(d)
		} else if errors.Is(err, ErrUnreachable) {
			return false, err
		}
	}
	return s.QueryRows(ctx, sql, int64(max), newSink(names, types))
}

// described reads DESCRIBE's answer: each column's name and type.
func described(d warehouse.Result) (names, types []string) {
	ni, ti := slices.Index(d.Columns, "column_name"), slices.Index(d.Columns, "column_type")
	if ni < 0 || ti < 0 {
		return nil, nil
	}
	for _, r := range d.Rows {
		names = append(names, r[ni])
		types = append(types, r[ti])
	}
	return names, types
}
