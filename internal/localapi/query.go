package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// QueryRequest is the body of POST QueryPath. MaxRows asks for at most that
// many rows (0: as many as the server's cap allows); the server refuses a
// MaxRows above its cap rather than quietly sending fewer.
type QueryRequest struct {
	SQL     string `json:"sql"`
	MaxRows int64  `json:"max_rows,omitempty"`
}

// QueryContentType is the answer's type. The answer to POST QueryPath is
// NDJSON, written while the warehouse reads it: a head line
// {"columns":[...]} (QueryHead), one JSON array of cells per row (the
// warehouse's text: NULL as "NULL", NUMERIC as its shortest exact decimal),
// and an end line {"end":{...}} (QueryTail). The status goes out with the
// head, so whatever stops the answer after it (a cap, the timeout, a
// failing engine) is told by the end line; an answer without its end line
// was cut on the way. Either way the reader reports an error, never a
// shorter result as if it were whole.
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

// AppendRow appends one row of an answer: cells as one JSON array and a
// newline.
func AppendRow(dst []byte, cells []string) []byte {
	dst = append(dst, '[')
	for i, c := range cells {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = warehouse.AppendJSONString(dst, c)
	}
	return append(dst, ']', '\n')
}

// ErrIncomplete marks an answer that stopped before its last row.
var ErrIncomplete = errors.New("incomplete answer")

// ReadAnswer decodes an answer into sink as it arrives and returns its end
// line; an answer stopped by the server, or cut on the way, is an error
// wrapping ErrIncomplete, after sink has seen its first rows.
func ReadAnswer(r io.Reader, sink warehouse.RowSink) (QueryEnd, error) {
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

// Statements splits sql at the semicolons that end statements (not those
// inside a string, a quoted name, a comment or a $$-quoted body) and
// returns the statements that hold more than blanks and comments, trimmed.
// The query endpoint runs one statement: a trailing ';' or comment is not a
// second one, "SELECT 1; SELECT 2" is.
func Statements(sql string) []string {
	var out []string
	start, i := 0, 0
	empty := true // only blanks and comments since start
	flush := func(end int) {
		if !empty {
			out = append(out, strings.TrimSpace(sql[start:end]))
		}
		start, empty = end+1, true
	}
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ';':
			flush(i)
			i++
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			i = skipPast(sql, i+2, "\n")
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = skipPast(sql, i+2, "*/")
		case c == '\'' || c == '"':
			empty = false
			i = skipQuoted(sql, i, c)
		case c == '$':
			empty = false
			i = skipDollar(sql, i)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			empty = false
			i++
		}
	}
	flush(len(sql))
	return out
}

// skipPast returns the index after the first end at or after i, or the
// length of s when there is none.
func skipPast(s string, i int, end string) int {
	if n := strings.Index(s[i:], end); n >= 0 {
		return i + n + len(end)
	}
	return len(s)
}

// skipQuoted returns the index after the quote that closes the one at i
// (a doubled quote is part of the text).
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// skipDollar skips a $tag$...$tag$ body starting at i; a '$' that opens
// none (a parameter, $1) is one character.
func skipDollar(s string, i int) int {
	j := i + 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i + 1
	}
	return skipPast(s, j+1, s[i:j+1])
}

// OneStatement returns the one statement of sql without its trailing ';'
// and comments, or an error a person can act on when sql holds several
// (DuckDB's own words for that name a Go API) or none.
func OneStatement(sql string) (string, error) {
	st := Statements(sql)
	switch len(st) {
	case 1:
		return st[0], nil
	case 0:
		return "", errors.New("no statement: the SQL holds only blanks, comments or ';'")
	default:
		return "", fmt.Errorf("one statement at a time: this SQL holds %d statements separated by ';'; send them one by one", len(st))
	}
}
