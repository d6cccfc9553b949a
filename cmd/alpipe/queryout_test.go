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
