// Package localapi is the contract between `alpipe serve` and its clients:
// both sides import it, so a name cannot drift; it links neither the server
// nor DuckDB, so a client stays light.
package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

const (
	DefaultAddr = "127.0.0.1:8080"
	DefaultURL  = "http://" + DefaultAddr
)

// The local-only routes exist because the embedded engines are
// single-process: a second process cannot open the DuckDB or state files
// while serve holds them, so client commands ask the server instead.
const (
	Prefix     = "/_local/"
	HealthPath = Prefix + "health"
	QueryPath  = Prefix + "query"  // POST QueryRequest, answered as QueryContentType
	LedgerPath = Prefix + "ledger" // GET every record, or LedgerURL's one (404 when unseen)
	ClockPath  = Prefix + "clock"  // POST ClockURL, answered with ClockAnswer
	StatusPath = Prefix + "status" // GET StatusURL, the status report
	ReplayPath = Prefix + "replay" // POST an orders history (JSONL)
)

// The functions, each at FunctionPath(name), by their FUNCTION_TARGET names
// (cmd/alpipe's TestFunctionRoutesMatchTheFunctions holds them equal to
// package functions', which does not link this client contract).
const (
	IngestCSV        = "IngestCSV"
	AggregateOrders  = "AggregateOrders"
	AdvanceWatermark = "AdvanceWatermark"
)

func FunctionPath(name string) string { return "/" + name }

const (
	FinalizedType = "google.cloud.storage.object.v1.finalized" // the Eventarc event IngestCSV takes
	Topic         = "pedidos-nuevos"                           // where the web application publishes orders
)

// The buckets of the server's fake Cloud Storage, named as in production.
const (
	LandingBucket    = "alpinashop-catalogo"
	QuarantineBucket = "alpinashop-cuarentena"
	StagingBucket    = "alpinashop-staging"
)

func LedgerURL(k ledger.Key) string {
	q := url.Values{"bucket": {k.Bucket}, "object": {k.Object}, "generation": {strconv.FormatInt(k.Generation, 10)}}
	return LedgerPath + "?" + q.Encode()
}

// LedgerKey reads LedgerURL's key; ok is false for the whole ledger.
func LedgerKey(q url.Values) (k ledger.Key, ok bool, err error) {
	if q.Get("object") == "" {
		return ledger.Key{}, false, nil
	}
	gen, err := strconv.ParseInt(q.Get("generation"), 10, 64)
	if err != nil {
		return ledger.Key{}, true, fmt.Errorf("generation: %w", err)
	}
	return ledger.Key{Bucket: q.Get("bucket"), Object: q.Get("object"), Generation: gen}, true, nil
}

func ClockURL(t time.Time) string {
	return ClockPath + "?now=" + url.QueryEscape(t.UTC().Format(time.RFC3339Nano))
}

func ClockTime(q url.Values) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, q.Get("now"))
	if err != nil {
		return time.Time{}, fmt.Errorf("now: %w", err)
	}
	return t, nil
}

type ClockAnswer struct {
	Now time.Time `json:"now"`
}

// StatusURL asks for the report of the last since, listing at most files;
// both must be positive: the server answers 400 to 0.
func StatusURL(since time.Duration, files int) string {
	q := url.Values{"since": {since.String()}, "files": {strconv.Itoa(files)}}
	return StatusPath + "?" + q.Encode()
}

// QueryRequest: the server refuses a MaxRows above its cap rather than
// quietly send fewer; 0 is as many as the cap allows.
type QueryRequest struct {
	SQL     string `json:"sql"`
	MaxRows int64  `json:"max_rows,omitempty"`
}

// QueryContentType: the answer is written while the warehouse reads it, as
// a head line (QueryHead), one JSON array of cells per row (the warehouse's
// text: NULL as "NULL"), and an end line (QueryTail). The status goes out
// with the head, so whatever stops the answer after it is told by the end
// line; an answer without one was cut on the way. Either way the reader
// reports an error, never a shorter result as if it were whole.
const QueryContentType = "application/x-ndjson"

type QueryHead struct {
	Columns []string `json:"columns"`
}

type QueryEnd struct {
	Rows  int64  `json:"rows"`
	More  bool   `json:"more,omitempty"`  // MaxRows was reached and more rows exist
	Error string `json:"error,omitempty"` // the answer stopped before its last row
	Limit string `json:"limit,omitempty"` // the setting that stopped it, if one did
}

// QueryTail is told from a row by its key.
type QueryTail struct {
	End QueryEnd `json:"end"`
}

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

// ReadAnswer: an answer stopped by the server, or cut on the way, is an
// error wrapping ErrIncomplete, after sink has seen its first rows.
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

func skipPast(s string, i int, end string) int {
	if n := strings.Index(s[i:], end); n >= 0 {
		return i + n + len(end)
	}
	return len(s)
}

// skipQuoted: a doubled quote is part of the text.
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

// skipDollar: a '$' that opens no $tag$ body (a parameter, $1) is one
// character.
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

// OneStatement says what to do where DuckDB's own words name a Go API.
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
