package local

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

type queryHandler struct {
	querier func() warehouse.Querier
	caps    config.Query
	capsErr error // every query is refused with it
	log     *slog.Logger
	// one runs queries one at a time. DuckDB builds a row's values in its
	// own memory, outside memory_limit, before the row cap can refuse it:
	// a SELECT of one 1 GB value still costs about 2 GB for a moment, and
	// four at once cost four times that. Serialised, the bound is one such
	// query; the others wait for their turn within their own timeout.
	// A channel of one slot, so that the wait ends with the context.
	one chan struct{}
}

// newQueryHandler makes the slot: a nil one would make every query wait
// out its timeout.
func newQueryHandler(querier func() warehouse.Querier, log *slog.Logger) *queryHandler {
	return &queryHandler{querier: querier, log: log, one: make(chan struct{}, 1)}
}

func (h *queryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.capsErr != nil {
		http.Error(w, h.capsErr.Error(), http.StatusServiceUnavailable)
		return
	}
	var req localapi.QueryRequest
	err := json.NewDecoder(r.Body).Decode(&req)
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		http.Error(w, fmt.Sprintf("query body larger than %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil || strings.TrimSpace(req.SQL) == "" {
		http.Error(w, "body must be {\"sql\": \"...\", \"max_rows\": n}", http.StatusBadRequest)
		return
	}
	switch {
	case req.MaxRows < 0:
		http.Error(w, fmt.Sprintf("max_rows %d: want 0 (up to the server's cap) or more", req.MaxRows), http.StatusBadRequest)
		return
	case req.MaxRows > h.caps.MaxRows:
		http.Error(w, fmt.Sprintf("max_rows %d is above this server's cap of %d rows: ALPIPE_QUERY_MAX_ROWS", req.MaxRows, h.caps.MaxRows), http.StatusBadRequest)
		return
	}
	// DuckDB's own refusal of several statements names a Go API; and a
	// trailing ';' or comment must not break the LIMIT wrap below.
	sql, err := localapi.OneStatement(req.SQL)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	st, ok := h.querier().(warehouse.RowStreamer)
	if !ok {
		http.Error(w, "no warehouse is open", http.StatusServiceUnavailable)
		return
	}
	timeout := &limitError{msg: fmt.Sprintf("query cancelled after %s", h.caps.Timeout), limit: "ALPIPE_QUERY_TIMEOUT"}
	ctx, cancel := context.WithTimeoutCause(r.Context(), h.caps.Timeout, timeout)
	defer cancel()
	select {
	case h.one <- struct{}{}:
		defer func() { <-h.one }()
	case <-ctx.Done():
		http.Error(w, fmt.Sprintf("%v, waiting for the query before it (queries run one at a time)", timeout), http.StatusGatewayTimeout)
		return
	}
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
		stop := cmp.Or(a.limit, timeout)
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
		http.Error(w, a.limit.Error(), http.StatusBadRequest)
	case errors.Is(err, timeout):
		http.Error(w, timeout.Error(), http.StatusGatewayTimeout)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		http.Error(w, "the warehouse answered without columns", http.StatusInternalServerError)
	}
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

var _ duckdb.RowCapped = (*answer)(nil)

// errStop tells the warehouse to stop reading rows: a cap was reached, or
// the rows the client asked for were sent.
var errStop = errors.New("answer stopped")

// limitError names the setting whose cap stopped an answer: the knob to turn.
type limitError struct {
	msg   string
	limit string // the environment variable
}

func (e *limitError) Error() string { return e.msg + ": " + e.limit }

// answer writes a query's answer as the warehouse reads it, holding one row
// and a fixed buffer whatever the answer's size.
type answer struct {
	w     http.ResponseWriter
	bw    *bufio.Writer
	caps  config.Query
	want  int64 // rows that may be sent (<= caps.MaxRows)
	asked bool  // want is the client's max_rows: reaching it means "more exist", no cap
	line  []byte
	rows  int64
	bytes int64
	// started: the head went out with status 200; from then on every
	// outcome is told by the end line.
	started bool
	more    bool
	limit   *limitError
}

func newAnswer(w http.ResponseWriter, caps config.Query, want int64) *answer {
	asked := want > 0 && want <= caps.MaxRows
	if !asked {
		want = caps.MaxRows
	}
	return &answer{w: w, caps: caps, want: want, asked: asked}
}

func (a *answer) Columns(names []string) error {
	line, err := json.Marshal(localapi.QueryHead{Columns: names})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if int64(len(line)) > a.caps.MaxBytes {
		a.limit = &limitError{msg: fmt.Sprintf("answer stopped before its first row: its %d column names take %d bytes, more than %d", len(names), len(line), a.caps.MaxBytes), limit: "ALPIPE_QUERY_MAX_BYTES"}
		return errStop
	}
	a.w.Header().Set("Content-Type", localapi.QueryContentType)
	a.w.Header().Set("X-Content-Type-Options", "nosniff")
	a.w.WriteHeader(http.StatusOK)
	a.started = true
	a.bw = bufio.NewWriterSize(a.w, 32<<10)
	return a.write(line)
}

func (a *answer) Row(cells []string) error {
	if a.rows == a.want {
		if a.asked {
			a.more = true
		} else {
			a.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows", a.rows), limit: "ALPIPE_QUERY_MAX_ROWS"}
		}
		return errStop
	}
	a.line = localapi.AppendRow(a.line[:0], cells)
	if a.bytes+int64(len(a.line)) > a.caps.MaxBytes {
		a.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows, %d bytes: the next row would pass %d bytes", a.rows, a.bytes, a.caps.MaxBytes), limit: "ALPIPE_QUERY_MAX_BYTES"}
		return errStop
	}
	a.rows++
	return a.write(a.line)
}

// MaxRowBytes: a row whose cells pass the answer's byte cap can never be
// sent, so the warehouse refuses it before copying it out (duckdb.RowCapped).
func (a *answer) MaxRowBytes() int64 { return a.caps.MaxBytes }

func (a *answer) RowTooLarge(size int64) error {
	a.limit = &limitError{msg: fmt.Sprintf("answer stopped at %d rows: the next row holds %d bytes of cells, more than %d", a.rows, size, a.caps.MaxBytes), limit: "ALPIPE_QUERY_MAX_BYTES"}
	return errStop
}

func (a *answer) write(b []byte) error {
	n, err := a.bw.Write(b)
	a.bytes += int64(n)
	return err
}

func (a *answer) end(failure error) error {
	e := localapi.QueryEnd{Rows: a.rows, More: a.more}
	switch {
	case a.limit != nil:
		e.Error, e.Limit = a.limit.Error(), a.limit.limit
	case failure != nil:
		e.Error = failure.Error()
		var le *limitError
		if errors.As(failure, &le) {
			e.Limit = le.limit
		}
	}
	line, err := json.Marshal(localapi.QueryTail{End: e})
	if err != nil {
		return err
	}
	if err := a.write(append(line, '\n')); err != nil {
		return err
	}
	return a.bw.Flush()
}
