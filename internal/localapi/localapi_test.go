package localapi_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestAnswerRoundTrip: what the server writes (AppendRow between a head and
// an end line) the client reads back cell for cell, whatever the cells
// hold.
func TestAnswerRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rows [][]string
	}{
		{name: "no rows", rows: [][]string{}},
		{name: "plain", rows: [][]string{{"PED-1", "179.8"}, {"PED-2", "NULL"}}},
		{name: "quotes, newlines, controls and non-ASCII", rows: [][]string{{"a \"b\"\n\tc\x01", "Muy cómoda ✓ <&>"}}},
		{name: "empty cells", rows: [][]string{{"", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			b.WriteString(`{"columns":["a","b"]}` + "\n")
			var line []byte
			for _, r := range tt.rows {
				line = localapi.AppendRow(line[:0], r)
				b.Write(line)
			}
			fmt.Fprintf(&b, `{"end":{"rows":%d}}`+"\n", len(tt.rows))
			var got warehouse.Collect
			if _, err := localapi.ReadAnswer(&b, &got); err != nil {
				t.Fatal(err)
			}
			want := warehouse.Result{Columns: []string{"a", "b"}, Rows: tt.rows}
			if diff := cmp.Diff(want, got.Result); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadAnswerRefusesACutAnswer: whatever stops an answer after its head
// (a cap, a broken connection, a lying count) is an error wrapping
// ErrIncomplete, never a shorter result.
func TestReadAnswerRefusesACutAnswer(t *testing.T) {
	const head = `{"columns":["a"]}` + "\n" + `["1"]` + "\n" + `["2"]` + "\n"
	tests := []struct {
		name, body, wantErr string
	}{
		{name: "no end line", body: head, wantErr: "incomplete answer: the answer broke off after 2 rows, before its end line: unexpected EOF"},
		{name: "cut inside a row", body: head + `["3`, wantErr: "incomplete answer: the answer broke off after 2 rows"},
		{name: "stopped by a cap", body: head + `{"end":{"rows":2,"error":"answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS","limit":"ALPIPE_QUERY_MAX_ROWS"}}` + "\n",
			wantErr: "incomplete answer: answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "count disagrees", body: head + `{"end":{"rows":3}}` + "\n", wantErr: "incomplete answer: the answer claims 3 rows after 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := localapi.ReadAnswer(strings.NewReader(tt.body), &warehouse.Collect{})
			if !errors.Is(err, localapi.ErrIncomplete) || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one starting %q and wrapping ErrIncomplete", err, tt.wantErr)
			}
		})
	}
}

// TestLedgerAndClockURLs: what the client sends, the server reads back.
func TestLedgerAndClockURLs(t *testing.T) {
	key := ledger.Key{Bucket: localapi.LandingBucket, Object: "exportaciones/a b&c.csv", Generation: 1700000000000001}
	u, err := url.Parse(localapi.LedgerURL(key))
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := localapi.LedgerKey(u.Query())
	if err != nil || !ok {
		t.Fatalf("LedgerKey: %v, %v", ok, err)
	}
	if u.Path != localapi.LedgerPath {
		t.Errorf("path %q, want %q", u.Path, localapi.LedgerPath)
	}
	if diff := cmp.Diff(key, got); diff != "" {
		t.Errorf("ledger key (-want +got):\n%s", diff)
	}
	if _, ok, err := localapi.LedgerKey(url.Values{}); ok || err != nil {
		t.Errorf("no object named: ok %v, err %v; want the whole ledger", ok, err)
	}

	at := time.Date(2026, 3, 14, 17, 5, 0, 123, time.FixedZone("CET", 3600))
	u, err = url.Parse(localapi.ClockURL(at))
	if err != nil {
		t.Fatal(err)
	}
	back, err := localapi.ClockTime(u.Query())
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(at) || u.Path != localapi.ClockPath {
		t.Errorf("clock %s at %s, want %s at %s", back, u.Path, at, localapi.ClockPath)
	}
}

// TestStatements: only a ';' outside strings, quoted names, comments and
// $$ bodies ends a statement, and blanks or comments are no statement.
func TestStatements(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{name: "one", sql: "SELECT 1", want: []string{"SELECT 1"}},
		{name: "trailing semicolons", sql: " SELECT 1 ;;\n", want: []string{"SELECT 1"}},
		{name: "trailing comment", sql: "SELECT 1; -- done", want: []string{"SELECT 1"}},
		{name: "two", sql: "SELECT 1; SELECT 2", want: []string{"SELECT 1", "SELECT 2"}},
		{name: "semicolon in a string", sql: "SELECT 'a;b', 'it''s;'", want: []string{"SELECT 'a;b', 'it''s;'"}},
		{name: "semicolon in a quoted name", sql: `SELECT 1 AS "x;y"`, want: []string{`SELECT 1 AS "x;y"`}},
		{name: "semicolon in comments", sql: "SELECT 1 -- a;b\n/* c; d */", want: []string{"SELECT 1 -- a;b\n/* c; d */"}},
		{name: "dollar quoted", sql: "SELECT $t$a;b$t$", want: []string{"SELECT $t$a;b$t$"}},
		{name: "parameter is no quote", sql: "SELECT $1; SELECT 2", want: []string{"SELECT $1", "SELECT 2"}},
		{name: "nothing", sql: " ; /* x */ ;", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, localapi.Statements(tt.sql)); diff != "" {
				t.Errorf("Statements(%q) (-want +got):\n%s", tt.sql, diff)
			}
		})
	}
}
