package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLCannotReachOutside runs the attacks on several pooled
// connections: the confinement is database-wide.
func TestSQLCannotReachOutside(t *testing.T) {
	dir := t.TempDir()
	w := open(t, filepath.Join(dir, "w.duckdb"), Options{TempDir: filepath.Join(dir, "tmp")})
	ctx := context.Background()
	tests := []struct{ name, sql, want string }{
		{name: "read a file", sql: "SELECT content FROM read_text('/etc/passwd')", want: "disabled by configuration"},
		{name: "list a folder", sql: "SELECT * FROM glob('/root/*')", want: "disabled by configuration"},
		{name: "read a csv elsewhere", sql: "SELECT * FROM read_csv('/etc/hostname')", want: "disabled by configuration"},
		{name: "attach a database", sql: "ATTACH '" + filepath.Join(dir, "other.duckdb") + "'", want: "disabled by configuration"},
		{name: "install an extension", sql: "INSTALL httpfs", want: ""},
		{name: "undo the confinement", sql: "SET enable_external_access = true", want: "locked"},
		{name: "widen the allowed folders", sql: "SET allowed_directories = ['/']", want: "locked"},
	}
	for i := 0; i < 3; i++ {
		c, err := w.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rows, err := c.QueryContext(ctx, tt.sql)
				if err == nil {
					rows.Close()
					t.Fatalf("%s succeeded on connection %d; want it refused", tt.sql, i)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("connection %d: %s: error %q does not say %q", i, tt.sql, err, tt.want)
				}
			})
		}
	}
}
