package localapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/localapi"
)

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
