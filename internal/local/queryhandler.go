package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// queryHandler serves POST localapi.QueryPath: any read-only SQL, answered
// as a stream within the caps of config.Query (see localapi.QueryContentType
// for the answer's form).
type queryHandler struct {
	querier func() warehouse.Querier
	caps    config.Query
	// capsErr: the caps' configuration is invalid; every query is refused
	// with it rather than run without bounds.
	capsErr error
	log     *slog.Logger
	// one runs queries one at a time. DuckDB builds a row's values in its
	// own memory, outside memory_limit, before the row cap can refuse it:
	// a SELECT of one 1 GB value still costs about 2 GB for a moment, and
	// four at once cost four times that. Serialised, the bound is one such
	// query; the others wait for their turn within their own timeout.
	one sync.Mutex
}

func (h *queryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.capsErr != nil {
		httpError(w, http.StatusServiceUnavailable, h.capsErr)
		return
	}
	var req localapi.QueryRequest
	err := json.NewDecoder(r.Body).Decode(&req)
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("query body larger than %d bytes", tooLarge.Limit))
		return
	}
	if err != nil || strings.TrimSpace(req.SQL) == "" {
		httpError(w, http.StatusBadRequest, errors.New("body must be {\"sql\": \"...\", \"max_rows\": n}"))
		return
	}
	switch {
	case req.MaxRows < 0:
		httpError(w, http.StatusBadRequest, fmt.Errorf("max_rows %d: want 0 (up to the server's cap) or more", req.MaxRows))
		return
	case req.MaxRows > h.caps.MaxRows:
		httpError(w, http.StatusBadRequest, fmt.Errorf("max_rows %d is above this server's cap of %d rows: ALPIPE_QUERY_MAX_ROWS", req.MaxRows, h.caps.MaxRows))
		return
	}
	// DuckDB's own refusal of several statements names a Go API; and a
	// trailing ';' or comment must not break the LIMIT wrap below.
	sql, err := localapi.OneStatement(req.SQL)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	// Every built-in warehouse streams (duckdb, bigquery): an answer is
	// never held whole.
	st, ok := h.querier().(warehouse.RowStreamer)
	if !ok {
		httpError(w, http.StatusServiceUnavailable, errors.New("no warehouse is open"))
		return
	}
	timeout := &limitError{msg: fmt.Sprintf("query cancelled after %s", h.caps.Timeout), limit: "ALPIPE_QUERY_TIMEOUT"}
	ctx, cancel := context.WithTimeoutCause(r.Context(), h.caps.Timeout, timeout)
	defer cancel()
	if !h.turn(ctx) {
		httpError(w, http.StatusGatewayTimeout, fmt.Errorf("%w, waiting for the query before it (queries run one at a time)", timeout))
		return
	}
	defer h.one.Unlock()
	a := newAnswer(w, h.caps, req.MaxRows)
	err = st.QueryRows(ctx, limited(sql, a.want+1), a)
	if err != nil && !a.started && ctx.Err() == nil && !errors.Is(err, errStop) {
		// Not wrappable (SHOW, DESCRIBE, a trailing comment): as sent,
		// which also gives the error in the query's own words.
		err = st.QueryRows(ctx, sql, a)
	}
	if errors.Is(err, errStop) {
		err = nil // a cap or the client's max_rows; a.limit tells which
	}
	if err != nil && errors.Is(context.Cause(ctx), timeout) {
		err = timeout
	}
	if a.limit != nil || errors.Is(err, timeout) {
		stop := a.limit
		if stop == nil {
			stop = timeout
		}
		h.log.WarnContext(r.Context(), "query answer stopped", "limit", stop.limit, "rows", a.rows, "bytes", a.bytes, "error", stop.Error())
	}
	if a.started {
		// The status is sent; the end line carries the outcome. An error
		// writing it is the client gone, with nobody left to tell.
		_ = a.end(err)
		return
	}
	switch {
	case a.limit != nil:
		httpError(w, http.StatusBadRequest, a.limit)
	case errors.Is(err, timeout):
		httpError(w, http.StatusGatewayTimeout, timeout)
	case err != nil:
		httpError(w, http.StatusBadRequest, err)
	default:
		httpError(w, http.StatusInternalServerError, errors.New("the warehouse answered without columns"))
	}
}

// turn waits until no other query runs, or ctx ends (then false).
func (h *queryHandler) turn(ctx context.Context) bool {
	for !h.one.TryLock() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// limited wraps sql in a LIMIT of the rows the answer may need (one past
// what it may send, to tell "more"), because DuckDB's driver materialises a
// result before the first row is read: 20 M rows held 860 MB in the engine
// even with the answer streamed. The newlines keep a trailing comment from
// swallowing the wrap; anything that is not one SELECT fails to prepare.
func limited(sql string, n int64) string {
	sql = strings.TrimRight(strings.TrimSpace(sql), "; \t\n")
	return fmt.Sprintf("SELECT * FROM (\n%s\n) AS q LIMIT %d", sql, n)
}
