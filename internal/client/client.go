// Package client is the command line's side of a running `alpipe serve`,
// over HTTP. It links neither the server nor DuckDB, so a client command
// starts at once and never opens the data folder the server holds.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Server is a running `alpipe serve`, by its base URL.
type Server struct {
	URL string // e.g. http://127.0.0.1:8080, no trailing slash (serverURL trims it)
}

// ErrUnreachable marks a server that did not answer at all.
var ErrUnreachable = errors.New("server unreachable")

type unreachableError struct{ url, cause string }

func (e unreachableError) Error() string {
	return fmt.Sprintf("is `alpipe serve` running at %s? (%s)", e.url, e.cause)
}

func (e unreachableError) Is(target error) bool { return target == ErrUnreachable }

// pingTimeout bounds the health check: a local server answers in
// milliseconds, and a client that waits longer only hides the problem.
const pingTimeout = 3 * time.Second

// Ping fails at once with a sentence, where the storage client would retry
// for minutes.
func (s Server) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+localapi.HealthPath, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the server at %s answered HTTP %d: %s", s.URL, resp.StatusCode, answerText(resp.Body, 512))
	}
	return nil
}

// answerText is the start of an error answer, for a message.
func answerText(r io.Reader, n int64) string {
	b, _ := io.ReadAll(io.LimitReader(r, n))
	return strings.TrimSpace(string(b))
}

// unreachable leaves out the request URL Go's errors repeat (a storage URL
// runs to 300 characters).
func (s Server) unreachable(err error) error {
	return unreachableError{url: s.URL, cause: cause(err)}
}

func cause(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// send reports the context's end as such, and nothing answering as
// ErrUnreachable.
func (s Server) send(ctx context.Context, method, path string, body io.Reader) (
	*http.Response, error,
) {
	req, err := s.request(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, s.unreachable(err)
	}
	return resp, nil
}

// request builds a request to path; a POST's body is JSON, and empty when
// body is nil.
func (s Server) request(ctx context.Context, method, path string, body io.Reader) (
	*http.Request, error,
) {
	if method == http.MethodPost && body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, body)
	if err == nil && method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// do decodes a 2xx JSON answer into v and returns the status, so callers
// can tell "not found" from failure.
func (s Server) do(ctx context.Context, method, path string, body io.Reader, v any) (int, error) {
	resp, err := s.send(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	req := resp.Request
	for req.Response != nil { // back through redirects to the request send built
		req = req.Response.Request
	}
	what := method + " " + req.URL.Path
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode,
			answerText(resp.Body, 4096))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: read the answer: %w", what, err)
	}
	return resp.StatusCode, nil
}

// QueryError is a query the server refused before its answer began. Msg is
// the server's words, which may span lines (DuckDB's caret under the SQL);
// the status is kept apart, so that a person reads only the reason.
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
	resp, err := s.send(ctx, http.MethodPost, localapi.QueryPath, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, &QueryError{Status: resp.StatusCode, Msg: answerText(resp.Body, 4096)}
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

// QueryTyped runs sql into the sink newSink makes, given the column names
// and warehouse types DESCRIBE reads (nil for SHOW and the like), so that
// money prints with its scale. The statement is sent once: the server
// already falls back from its LIMIT wrap to the statement as sent, so a
// second try would only run a refused or timed-out query again.
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
