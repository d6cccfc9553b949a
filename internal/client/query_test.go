package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
