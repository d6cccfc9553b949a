package local

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

var _ duckdb.RowCapped = (*answer)(nil)

// errStop is how an answer tells the warehouse to stop reading rows: a cap
// was reached, or the rows the client asked for were sent.
var errStop = errors.New("answer stopped")

// limitError is an answer stopped by one of the server's caps. It names
// the setting, so that whoever reads it knows which knob to turn.
type limitError struct {
	msg   string
	limit string // the environment variable
}

func (e *limitError) Error() string { return e.msg + ": " + e.limit }

// answer is the warehouse.RowSink that writes a query's answer to the
// client as NDJSON while the warehouse reads it (see localapi.QueryContentType):
// it holds one row at a time and a fixed buffer, whatever the answer's size.
type answer struct {
	w    http.ResponseWriter
	bw   *bufio.Writer
	caps config.Query
	want int64 // rows that may be sent (<= caps.MaxRows)
	// asked: want is the client's own max_rows, so reaching it means "more
	// exist", not a cap that cut the answer.
	asked bool
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
		// One row beyond what may be sent: the answer is longer than this.
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

// end writes the end line: the count, or why the answer stopped early
// (failure nil and no cap hit: complete).
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
