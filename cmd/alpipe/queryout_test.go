package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// TestQueryErrorsReadAsSentences: what a person sees after "alpipe: " is
// the reason in the engine's words without the request's plumbing, and
// DuckDB's SQL line and caret on lines of their own, aligned. The server's
// caps are named by their variable, and no row of a refused or stopped
// answer is printed as if it were the whole answer.
func TestQueryErrorsReadAsSentences(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "syntax error with its caret", args: []string{"query", "SELEC * FROM ventas_diarias_sku"},
			want: "query: syntax error at or near \"SELEC\"\n  LINE 1: SELEC * FROM ventas_diarias_sku\n          ^"},
		{name: "several statements", args: []string{"query", "SELECT 1; SELECT 2"},
			want: "query: one statement at a time: this SQL holds 2 statements separated by ';'; send them one by one"},
		{name: "a cap stays one line", args: []string{"query", "SELECT 1", "--max-rows", "1000001"},
			want: "query: max_rows 1000001 is above this server's cap of 1000000 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "other commands' errors stay one line", args: []string{"query", "SELECT 1", "--format", "xml"},
			want: `query: --format "xml": want table or csv or json or jsonl`},
		{name: "every row, past the cap: none printed", args: []string{"query", "SELECT i FROM range(1000001) t(i)", "--max-rows", "0"},
			want: "query: incomplete answer: answer stopped at 1000000 rows: ALPIPE_QUERY_MAX_ROWS (no row printed: " +
				"they are not the whole answer; add a LIMIT or --max-rows)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			if err == nil || out != "" {
				t.Fatalf("error %v; printed %.200q, want nothing", err, out)
			}
			if diff := cmp.Diff(tt.want, errorText(err)); diff != "" {
				t.Errorf("error as printed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryOutputFile: --output streams every row (not --max-rows' 100)
// to the file, in csv or jsonl by flag or by extension (money with its
// scale in both), says how many, and leaves nothing else in the folder.
func TestQueryOutputFile(t *testing.T) {
	const sql = "SELECT i AS id_linea, 'a,b&c' AS s, CAST(i * 0.25 AS DECIMAL(10,2)) AS importe FROM range(3) t(i)"
	tests := []struct {
		name     string
		file     string
		args     []string
		wantFile string
	}{
		{name: "csv by extension", file: "out.csv",
			wantFile: "id_linea,s,importe\n0,\"a,b&c\",0.00\n1,\"a,b&c\",0.25\n2,\"a,b&c\",0.50\n"},
		{name: "jsonl by extension", file: "out.jsonl",
			wantFile: `{"id_linea":0,"s":"a,b&c","importe":"0.00"}` + "\n" + `{"id_linea":1,"s":"a,b&c","importe":"0.25"}` + "\n" + `{"id_linea":2,"s":"a,b&c","importe":"0.50"}` + "\n"},
		{name: "jsonl by flag", file: "out.txt", args: []string{"--format", "jsonl"},
			wantFile: `{"id_linea":0,"s":"a,b&c","importe":"0.00"}` + "\n" + `{"id_linea":1,"s":"a,b&c","importe":"0.25"}` + "\n" + `{"id_linea":2,"s":"a,b&c","importe":"0.50"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tt.file)
			out, err := run(t, append([]string{"query", sql, "--output", file}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fmt.Sprintf("wrote 3 rows to %s\n", file), out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantFile, string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.file, diff)
			}
			if diff := cmp.Diff([]string{tt.file}, names(t, dir)); diff != "" {
				t.Errorf("folder (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryOutputCutLeavesNoFile: an answer that stops before its end
// line (a cap, a dropped connection) or is refused leaves no FILE and no
// temporary file, and an older FILE as it was.
func TestQueryOutputCutLeavesNoFile(t *testing.T) {
	const head = `{"columns":["a"]}` + "\n" + `["1"]` + "\n" + `["2"]` + "\n"
	tests := []struct {
		name    string
		status  int
		body    string
		old     string // FILE's content before, "" for none
		wantErr string
	}{
		{name: "cut on the way", status: 200, body: head, wantErr: "query: incomplete answer: the answer broke off after 2 rows, before its end line: unexpected EOF (%s not written"},
		{name: "stopped by a cap", status: 200, body: head + `{"end":{"rows":2,"error":"answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS","limit":"ALPIPE_QUERY_MAX_ROWS"}}` + "\n", old: "an older answer\n", wantErr: "query: incomplete answer: answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS (%s not written"},
		{name: "refused", status: 400, body: "query: Parser Error: syntax error at or near \"SELEC\"\n", wantErr: `query: syntax error at or near "SELEC"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", localapi.QueryContentType)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer ts.Close()
			dir := t.TempDir()
			file := filepath.Join(dir, "out.csv")
			if tt.old != "" {
				if err := os.WriteFile(file, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			err := dispatch(context.Background(), []string{"query", "SELECT a FROM t", "--output", file, "--server", ts.URL}, &out)
			if want := strings.ReplaceAll(tt.wantErr, "%s", file); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %v, want one starting %q", err, want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q", out.String())
			}
			wantNames := []string(nil)
			if tt.old != "" {
				wantNames = []string{"out.csv"}
				got, _ := os.ReadFile(file)
				if diff := cmp.Diff(tt.old, string(got)); diff != "" {
					t.Errorf("the older FILE (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(wantNames, names(t, dir)); diff != "" {
				t.Errorf("folder (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorText: an error prints on one line, with the detail of one that
// carries it under that line as it is, however deep it is wrapped.
func TestErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "plain", err: errors.New("drop: open x.csv:\n no such file"), want: "drop: open x.csv: no such file"},
		{name: "wrapped detail", err: fmt.Errorf("query: %w", &detailError{msg: "syntax error", detail: "  LINE 1: SELEC 1\n          ^\n"}), want: "query: syntax error\n  LINE 1: SELEC 1\n          ^"},
		{name: "empty detail", err: &detailError{msg: "x"}, want: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, errorText(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	return n
}
