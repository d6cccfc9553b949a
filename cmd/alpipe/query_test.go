package main

import (
	"strings"
	"testing"
)

// TestQueryCapsAreNamed: the server's caps reach the person at the
// terminal as errors naming the variable, and no row of a stopped answer
// is printed as if it were the whole answer.
func TestQueryCapsAreNamed(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "--max-rows above the cap", args: []string{"query", "SELECT 1", "--max-rows", "1000001"}, wantErr: "max_rows 1000001 is above this server's cap of 1000000 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "every row, past the cap", args: []string{"query", "SELECT i FROM range(1000001) t(i)", "--max-rows", "0"}, wantErr: "incomplete answer: answer stopped at 1000000 rows: ALPIPE_QUERY_MAX_ROWS (no row printed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
			if out != "" {
				t.Errorf("printed %d bytes of a refused or stopped answer:\n%.200s", len(out), out)
			}
		})
	}
}
