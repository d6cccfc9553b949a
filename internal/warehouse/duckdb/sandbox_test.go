package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryRefusesFilesAndWrites: the query path refuses the functions
// that read files, write the database or run SQL of their own, saying why
// (see refusal).
func TestQueryRefusesFilesAndWrites(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	w := open(t, db, Options{TempDir: filepath.Join(dir, "tmp")})
	tests := []struct{ name, sql, want string }{
		{name: "read the database file", sql: "SELECT octet_length(content) FROM read_blob('" + db + "')", want: "read_blob() is refused: a query reads the warehouse's tables, never a file"},
		{name: "read the WAL as text", sql: "SELECT * FROM (SELECT content FROM read_text('" + db + ".wal')) AS t", want: "read_text() is refused: a query reads the warehouse's tables, never a file"},
		{name: "checkpoint", sql: "SELECT * FROM checkpoint()", want: "checkpoint() is refused: a query may not write the database"},
		{name: "checkpoint, qualified and in capitals", sql: "SELECT * FROM range(1), main.CHECKPOINT()", want: "checkpoint() is refused: a query may not write the database"},
		{name: "force a checkpoint", sql: "SELECT * FROM force_checkpoint()", want: "force_checkpoint() is refused: a query may not write the database"},
		{name: "run SQL the check cannot see", sql: "SELECT * FROM query('SELECT * FROM checkpoint()')", want: "query() is refused: it runs SQL of its own"},
		{name: "in a CTE", sql: "WITH f AS (SELECT * FROM read_blob('" + db + "')) SELECT octet_length(content) FROM f", want: "read_blob() is refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.Query(context.Background(), tt.sql)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// What the functions' names look like elsewhere is no function.
	res, err := w.Query(context.Background(), "SELECT 'read_blob' AS checkpoint, count(*) AS n FROM range(3) AS query")
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "read_blob" {
		t.Errorf("a query naming a column checkpoint: %v, %v", res, err)
	}
}
