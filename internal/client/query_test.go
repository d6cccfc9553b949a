package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestQueryRowsNeverTakesACutAnswerForWhole: whatever stops an answer
// after its head (a cap, a broken connection, a lying count) is an error
// wrapping ErrIncomplete, never a shorter result.
func TestQueryRowsNeverTakesACutAnswerForWhole(t *testing.T) {
	const head = `{"columns":["a"]}` + "\n" + `["1"]` + "\n" + `["2"]` + "\n"
	tests := []struct {
		name     string
		body     string
		wantRows [][]string
		wantMore bool
		wantErr  string // "" for a whole answer
	}{
		{name: "whole", body: head + `{"end":{"rows":2}}` + "\n", wantRows: [][]string{{"1"}, {"2"}}},
		{name: "more exist", body: head + `{"end":{"rows":2,"more":true}}` + "\n", wantRows: [][]string{{"1"}, {"2"}}, wantMore: true},
		{name: "no end line", body: head, wantErr: "incomplete answer: the answer broke off after 2 rows, before its end line: unexpected EOF"},
		{name: "cut inside a row", body: head + `["3`, wantErr: "incomplete answer: the answer broke off after 2 rows"},
		{name: "stopped by a cap", body: head + `{"end":{"rows":2,"error":"answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS","limit":"ALPIPE_QUERY_MAX_ROWS"}}` + "\n", wantErr: "incomplete answer: answer stopped at 2 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "count disagrees", body: head + `{"end":{"rows":3}}` + "\n", wantErr: "incomplete answer: the answer claims 3 rows after 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", localapi.QueryContentType)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer ts.Close()
			var got warehouse.Collect
			more, err := client.Server{URL: ts.URL}.QueryRows(t.Context(), "SELECT 1", 0, &got)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, localapi.ErrIncomplete) || len(err.Error()) < len(tt.wantErr) || err.Error()[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("error %v, want one starting %q and wrapping ErrIncomplete", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(warehouse.Result{Columns: []string{"a"}, Rows: tt.wantRows}, got.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if more != tt.wantMore {
				t.Errorf("more = %v, want %v", more, tt.wantMore)
			}
		})
	}
}

// TestQueryTypedRunsAStatementOnce: a refused or timed-out query is not
// sent again (a 60 s timeout used to cost 120 s): the server already
// wraps it in its LIMIT and falls back to the plain statement itself.
func TestQueryTypedRunsAStatementOnce(t *testing.T) {
	tests := []struct {
		name   string
		status int
		msg    string
	}{
		{name: "timed out", status: http.StatusGatewayTimeout, msg: "query cancelled after 1m0s: ALPIPE_QUERY_TIMEOUT"},
		{name: "refused", status: http.StatusBadRequest, msg: `Catalog Error: Table with name nope does not exist!`},
		{name: "no warehouse", status: http.StatusServiceUnavailable, msg: "no warehouse is open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req localapi.QueryRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					t.Errorf("decode the request: %v", err)
				}
				if strings.HasPrefix(req.SQL, "DESCRIBE ") {
					http.Error(w, "not describable", http.StatusBadRequest)
					return
				}
				runs = append(runs, req.SQL)
				http.Error(w, tt.msg, tt.status)
			}))
			defer ts.Close()
			_, err := client.Server{URL: ts.URL}.QueryTyped(t.Context(), "SELECT * FROM nope", 100, func(_, _ []string) warehouse.RowSink {
				return &warehouse.Collect{}
			})
			var qe *client.QueryError
			if !errors.As(err, &qe) || qe.Status != tt.status || qe.Msg != tt.msg {
				t.Fatalf("error %#v, want a QueryError %d %q", err, tt.status, tt.msg)
			}
			if diff := cmp.Diff([]string{"SELECT * FROM nope"}, runs); diff != "" {
				t.Errorf("statements run (-want +got):\n%s", diff)
			}
		})
	}
}
