package remote

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Handler serves the calls of a Client for b. Its paths are relative to
// where it is mounted, so mount it with the prefix stripped:
//
//	mux.Handle("/_local/warehouse/", http.StripPrefix("/_local/warehouse", remote.Handler(wh)))
//
// It answers 400 to a request it cannot read, 409 to rows encoded for
// another schema, and 500 with the backend's message when the backend
// fails. It gives write access to the warehouse to anyone who can reach it:
// mount it only on a server bound to the local machine.
func Handler(b Backend) http.Handler {
	return &handler{b: b}
}

type handler struct{ b Backend }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Accept the path with or without its leading slash, whichever way the
	// prefix was stripped.
	var serve func(http.ResponseWriter, *http.Request)
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case pathLoad:
		serve = h.load
	case pathAppend:
		serve = h.append
	case pathRefresh:
		serve = h.refresh
	case pathQuery:
		serve = h.query
	case pathRead:
		serve = h.read
	default:
		http.Error(w, fmt.Sprintf("no warehouse endpoint %q: want %s, %s, %s, %s or %s", r.URL.Path, pathLoad, pathAppend, pathRefresh, pathQuery, pathRead), http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, r.Method+" not allowed: use POST", http.StatusMethodNotAllowed)
		return
	}
	serve(w, r)
}

// maxRowBytes bounds one line of a body, so a broken client cannot make the
// server buffer without limit. A row of the widest table with MAX_RECORD_BYTES
// of text, escaped, is far below it.
const maxRowBytes = 32 << 20

// maxSmallBody bounds the bodies that are read whole: appends, refreshes
// and queries.
const maxSmallBody = 64 << 20

// codecFor checks the table named by the request and that the client
// encoded its rows for the same schema.
func codecFor(r *http.Request, table string) (*codec, int, error) {
	t, err := warehouse.Lookup(table)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if got, want := r.Header.Get(schemaHeader), fingerprint(t); got != want {
		return nil, http.StatusConflict, fmt.Errorf("rows for table %s were encoded for schema %q, this server's is %q: run the same alpipe version on both sides", table, got, want)
	}
	c, err := newCodec(t)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return c, 0, nil
}

func (h *handler) load(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	table, id := q.Get("table"), q.Get("id")
	op := "load " + id + " into " + table
	c, code, err := codecFor(r, table)
	if err != nil {
		fail(w, code, op, err)
		return
	}
	src := newBodySource(r.Body, c)
	res, err := h.b.Load(r.Context(), warehouse.Load{ID: id, Table: table, Rows: src})
	if err != nil {
		code := http.StatusInternalServerError
		if src.err != nil {
			code = http.StatusBadRequest // the body, not the warehouse, failed
		}
		fail(w, code, op, err)
		return
	}
	if !res.AlreadyLoaded && !src.done {
		fail(w, http.StatusInternalServerError, op, errors.New("the warehouse reported success before reading the whole body"))
		return
	}
	writeJSON(w, loadResponse{Rows: res.Rows, AlreadyLoaded: res.AlreadyLoaded})
}

func (h *handler) append(w http.ResponseWriter, r *http.Request) {
	table := r.URL.Query().Get("table")
	op := "append to " + table
	c, code, err := codecFor(r, table)
	if err != nil {
		fail(w, code, op, err)
		return
	}
	src := newBodySource(http.MaxBytesReader(w, r.Body, maxSmallBody), c)
	src.withID = true
	var rows []warehouse.Row
	for src.Next() {
		rows = append(rows, warehouse.Row{ID: src.id, Values: append([]warehouse.Value(nil), src.Row()...)})
	}
	if err := src.Err(); err != nil {
		fail(w, http.StatusBadRequest, op, err)
		return
	}
	if err := h.b.Append(r.Context(), table, rows); err != nil {
		fail(w, http.StatusInternalServerError, op, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) refresh(w http.ResponseWriter, r *http.Request) {
	var req refreshRequest
	if err := decodeJSON(w, r, &req); err != nil {
		fail(w, http.StatusBadRequest, "refresh", err)
		return
	}
	var res refreshResponse
	var oe *warehouse.OverflowError
	err := h.b.RefreshDaily(r.Context(), req.Aggregate, req.Dates)
	switch {
	case errors.As(err, &oe):
		// The refresh succeeded but for these groups: the client
		// reports them as its own backend would.
		res.Overflows = oe.Overflows
	case err != nil:
		fail(w, http.StatusInternalServerError, "refresh "+req.Aggregate, err)
		return
	}
	writeJSON(w, res)
}

func (h *handler) query(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SQL *textCell `json:"sql"`
	}
	if err := decodeJSON(w, r, &req); err != nil || req.SQL == nil {
		if err == nil {
			err = errors.New(`body must be {"sql": "..."}`)
		}
		fail(w, http.StatusBadRequest, "query", err)
		return
	}
	res, err := h.b.Query(r.Context(), string(*req.SQL))
	if err != nil {
		fail(w, http.StatusInternalServerError, "query", err)
		return
	}
	w.Header().Set("Content-Type", jsonType)
	_ = writeResult(w, res) // an error here is the client gone; nobody to tell
}

func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSmallBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", jsonType)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers with err as plain text. The backend's errors already say
// what failed; the operation is added only to the handler's own.
func fail(w http.ResponseWriter, code int, op string, err error) {
	msg := err.Error()
	if code != http.StatusInternalServerError {
		msg = op + ": " + msg
	}
	http.Error(w, msg, code)
}

// bodySource is the RowSource a load hands the backend: rows decoded from
// the request body as the backend reads them. It reports the end of the
// rows only after the end line with the right count and the end of the
// body; anything short of that (a client that aborted, a connection that
// broke) is an error, so the backend rolls back.
type bodySource struct {
	sc     *bufio.Scanner
	codec  *codec
	row    []warehouse.Value
	withID bool
	id     string
	n      int64
	done   bool
	err    error
}

func newBodySource(body io.Reader, c *codec) *bodySource {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxRowBytes)
	return &bodySource{sc: sc, codec: c, row: make([]warehouse.Value, len(c.kinds))}
}

func (s *bodySource) Next() bool {
	if s.done || s.err != nil {
		return false
	}
	if !s.sc.Scan() {
		err := s.sc.Err()
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			err = fmt.Errorf("row %d is longer than %d bytes", s.n+1, maxRowBytes)
		case err == nil:
			err = io.ErrUnexpectedEOF
		}
		s.err = fmt.Errorf("request body broke off after %d rows, before its end line: %w", s.n, err)
		return false
	}
	line := s.sc.Bytes()
	if len(line) > 0 && line[0] == '{' {
		s.end(line)
		return false
	}
	id, err := s.codec.decodeRow(line, s.row, s.withID)
	if err != nil {
		s.err = fmt.Errorf("row %d: %w", s.n+1, err)
		return false
	}
	s.id = id
	s.n++
	return true
}

// end checks the end line and that nothing follows it.
func (s *bodySource) end(line []byte) {
	n, err := parseEnd(line)
	switch {
	case err != nil:
		s.err = fmt.Errorf("after row %d: %w", s.n, err)
	case n != s.n:
		s.err = fmt.Errorf("request body ends claiming %d rows after %d", n, s.n)
	case s.sc.Scan():
		s.err = fmt.Errorf("request body goes on after its end line")
	case s.sc.Err() != nil:
		s.err = fmt.Errorf("request body after its end line: %w", s.sc.Err())
	default:
		s.done = true
	}
}

func (s *bodySource) Row() []warehouse.Value { return s.row }

func (s *bodySource) Err() error { return s.err }
