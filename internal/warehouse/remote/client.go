package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Client is a warehouse adapter that forwards every call to a Handler over
// HTTP. It is safe for concurrent use.
type Client struct {
	base string // scheme://host/path, without a trailing slash
	http *http.Client
}

var _ warehouse.Warehouse = (*Client)(nil)

// ExpectContinueTimeout is how long the default client's Load waits for the
// server to ask for the rows (100 Continue) before sending them anyway. The
// server asks as soon as the warehouse starts reading; until then it may
// answer that the load ID has committed, and the source is then never read.
// A long wait costs nothing with the Handler, which always answers.
const ExpectContinueTimeout = 30 * time.Second

// New returns a Client for the Handler mounted at baseURL, e.g.
// "http://127.0.0.1:8080/_local/warehouse". A nil client means a default one
// with ExpectContinueTimeout and no overall timeout (loads take as long as
// their files; contexts bound them). A client whose transport has no
// ExpectContinueTimeout works too, but then reads the source of a load
// whose ID has committed already.
func New(baseURL string, client *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("remote warehouse: base URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("remote warehouse: base URL %q: scheme must be http or https", baseURL)
	case u.Host == "":
		return nil, fmt.Errorf("remote warehouse: base URL %q has no host", baseURL)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("remote warehouse: base URL %q must not have a query or fragment", baseURL)
	}
	if client == nil {
		client = defaultClient()
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return &Client{base: u.String(), http: client}, nil
}

func defaultClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	t = t.Clone()
	t.ExpectContinueTimeout = ExpectContinueTimeout
	return &http.Client{Transport: t}
}

// StatusError is an answer of the Handler other than success: the backend's
// error, or a request the handler refused.
type StatusError struct {
	Op      string // what failed, e.g. "load wt1-g1 into lineas_pedido"
	Code    int    // HTTP status
	Message string // the server's message
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("remote warehouse: %s: server answered %d %s: %s", e.Op, e.Code, http.StatusText(e.Code), e.Message)
}

// maxErrorBody bounds how much of an error answer becomes the message.
const maxErrorBody = 64 << 10

func statusError(op string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = "(no message)"
	}
	return &StatusError{Op: op, Code: resp.StatusCode, Message: msg}
}

// endpoint is the URL of path under the base, with query q.
func (c *Client) endpoint(path string, q url.Values) string {
	s := c.base + "/" + path
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// do sends req and checks the answer's status; the caller closes the body
// of a successful answer.
func (c *Client) do(req *http.Request, op string, want int) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		if cerr := req.Context().Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	if resp.StatusCode != want {
		defer resp.Body.Close()
		return nil, statusError(op, resp)
	}
	return resp, nil
}

// drain reads the rest of a successful answer so its connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// loadResponse is the answer to a load.
type loadResponse struct {
	Rows          int64 `json:"rows"`
	AlreadyLoaded bool  `json:"already_loaded"`
}

// Load streams req.Rows to the server as they are read, so a file of any
// size passes in bounded memory. If the source fails midway, the request is
// aborted before its end line and the server commits nothing; the error
// wraps the source's.
func (c *Client) Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	op := "load " + req.ID + " into " + req.Table
	t, err := warehouse.Lookup(req.Table)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	cd, err := newCodec(t)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	body := newRowsBody(req.Rows, cd)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost,
		c.endpoint(pathLoad, url.Values{"table": {req.Table}, "id": {req.ID}}), body)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	hreq.ContentLength = -1 // chunked: an aborted body cannot look complete
	hreq.Header.Set("Content-Type", ndjsonType)
	hreq.Header.Set("Expect", "100-continue")
	hreq.Header.Set(schemaHeader, fingerprint(t))
	resp, err := c.do(hreq, op, http.StatusOK)
	// From here on the source is the caller's again.
	if berr := body.detach(); berr != nil {
		if resp != nil {
			drain(resp)
		}
		return warehouse.LoadResult{}, fmt.Errorf("remote warehouse: %s: %w", op, berr)
	}
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	defer drain(resp)
	var lr loadResponse
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("remote warehouse: %s: read answer: %w", op, err)
	}
	return warehouse.LoadResult{Rows: lr.Rows, AlreadyLoaded: lr.AlreadyLoaded}, nil
}

// refreshRequest is the body of a refresh.
type refreshRequest struct {
	Aggregate string  `json:"aggregate"`
	Dates     []int32 `json:"dates"`
}

// refreshResponse is the answer to a refresh: the sums the server's
// RefreshDaily reported out of range (a *warehouse.OverflowError), if any.
type refreshResponse struct {
	Overflows []warehouse.Overflow `json:"overflows"`
}

// RefreshDaily asks the server to recompute aggregate for dates. Sums out
// of range come back as the server's backend reported them: a
// *warehouse.OverflowError after a refresh of every other group.
func (c *Client) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	op := "refresh " + aggregate
	b, err := json.Marshal(refreshRequest{Aggregate: aggregate, Dates: dates})
	if err != nil {
		return fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	resp, err := c.post(ctx, pathRefresh, nil, jsonType, b, nil, op, http.StatusOK)
	if err != nil {
		return err
	}
	defer drain(resp)
	var rr refreshResponse
	if err := json.NewDecoder(resp.Body).Decode(&rr); err != nil {
		return fmt.Errorf("remote warehouse: %s: read answer: %w", op, err)
	}
	if len(rr.Overflows) == 0 {
		return nil
	}
	a, err := warehouse.LookupAggregate(aggregate)
	if err != nil {
		return fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	return a.OverflowError(rr.Overflows)
}

// Append sends rows in one request; the server appends them in one call.
// Rows that cannot be encoded fail the call before anything is sent.
func (c *Client) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	op := fmt.Sprintf("append %d rows to %s", len(rows), table)
	t, err := warehouse.Lookup(table)
	if err != nil {
		return fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	cd, err := newCodec(t)
	if err != nil {
		return fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	var b []byte
	for i, r := range rows {
		if b, err = cd.appendIDRow(b, r); err != nil {
			return fmt.Errorf("remote warehouse: %s: row %d (%s): %w", op, i, r.ID, err)
		}
	}
	b = appendEnd(b, int64(len(rows)))
	h := http.Header{schemaHeader: {fingerprint(t)}}
	resp, err := c.post(ctx, pathAppend, url.Values{"table": {table}}, ndjsonType, b, h, op, http.StatusNoContent)
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// Query runs sql on the server's warehouse.
func (c *Client) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	const op = "query"
	// appendString, not encoding/json, so that the text arrives byte for byte.
	b := append(appendString([]byte(`{"sql":`), sql), '}')
	resp, err := c.post(ctx, pathQuery, nil, jsonType, b, nil, op, http.StatusOK)
	if err != nil {
		return warehouse.Result{}, err
	}
	defer drain(resp)
	res, err := readResult(resp.Body)
	if err != nil {
		return warehouse.Result{}, fmt.Errorf("remote warehouse: %s: read answer: %w", op, err)
	}
	return res, nil
}

// post sends a small in-memory body.
func (c *Client) post(ctx context.Context, path string, q url.Values, contentType string, body []byte, h http.Header, op string, want int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(path, q), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("remote warehouse: %s: %w", op, err)
	}
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", contentType)
	// Appends (by row ID), refreshes and queries are idempotent: let the
	// transport resend one that met a keep-alive connection the server had
	// just closed. A nil value marks it without sending the header.
	req.Header["X-Idempotency-Key"] = nil
	return c.do(req, op, want)
}
