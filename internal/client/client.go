// Package client is the command line's side of a running `alpipe serve`:
// it uploads files through the server's fake Cloud Storage, delivers the
// events Eventarc and Pub/Sub would, runs read-only SQL and reads the
// ledger and the status report, all over HTTP. It links neither the server
// nor DuckDB, so a client command starts at once and never opens the data
// folder the server holds.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// Server is a running `alpipe serve`, by its base URL.
type Server struct {
	URL string // e.g. http://127.0.0.1:8080
}

// ErrUnreachable marks a server that did not answer at all.
var ErrUnreachable = errors.New("server unreachable")

// unreachableError is one short sentence; errors.Is(err, ErrUnreachable)
// holds for it.
type unreachableError struct{ url, cause string }

func (e unreachableError) Error() string {
	return fmt.Sprintf("is `alpipe serve` running at %s? (%s)", e.url, e.cause)
}

func (e unreachableError) Is(target error) bool { return target == ErrUnreachable }

// pingTimeout bounds the health check: a local server answers in
// milliseconds, and a client that waits longer only hides the problem.
const pingTimeout = 3 * time.Second

func (s Server) base() string { return strings.TrimSuffix(s.URL, "/") }

// Ping checks that a server answers at URL, so that a command fails at once
// with a sentence rather than after the storage client's retries.
func (s Server) Ping(ctx context.Context) error {
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--server %q: want a URL such as %s", s.URL, localapi.DefaultURL)
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base()+localapi.HealthPath, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the server at %s answered HTTP %d: %s", s.URL, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}

// unreachable says in one short line that nothing answered, without the
// request URL Go's errors repeat (a storage URL runs to 300 characters).
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

// do sends req and decodes a 2xx JSON answer into v (v nil: discard). It
// returns the status so callers can tell "not found" from failure.
func (s Server) do(req *http.Request, v any) (int, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return 0, s.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if v == nil {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read the answer: %w", req.Method, req.URL.Path, err)
	}
	return resp.StatusCode, nil
}

func (s Server) getJSON(ctx context.Context, path string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base()+path, nil)
	if err != nil {
		return 0, err
	}
	return s.do(req, v)
}

func (s Server) postJSON(ctx context.Context, path string, body io.Reader, v any) (int, error) {
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base()+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	return s.do(req, v)
}
