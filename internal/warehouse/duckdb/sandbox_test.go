package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestQueryRefusesFilesAndWrites: the query path refuses statements that
// write, and the functions that read files, write the database or run SQL
// of their own, saying why (see refusal); the loaded rows stay.
func TestQueryRefusesFilesAndWrites(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	w := open(t, db, Options{TempDir: filepath.Join(dir, "tmp")})
	ctx := context.Background()
	rows := newOrderLines(3, "gs://b/o.csv", 1)
	_, err := w.Load(ctx, warehouse.Load{ID: "f-1", Table: warehouse.LineasPedido, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, sql, want string }{
		// DELETE, UPDATE and a script: the suite's QueryIsReadOnly.
		{name: "drop a table", sql: "DROP TABLE lineas_pedido"},
		{name: "create a table", sql: "CREATE TABLE x AS SELECT 1"},
		{name: "insert", sql: "INSERT INTO lineas_pedido SELECT * FROM lineas_pedido"},
		{name: "copy to a file", sql: "COPY lineas_pedido TO '" + filepath.Join(dir, "out.csv") + "'"},
		{name: "set an option", sql: "SET memory_limit = '1GB'"},
		{name: "attach a database", sql: "ATTACH ':memory:' AS other"},
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
			_, err := w.Query(ctx, tt.sql)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// What the functions' names look like elsewhere is no function.
	checkQuery(t, w, "SELECT 'read_blob' AS checkpoint, count(*) AS n FROM range(3) AS query",
		[][]string{{"read_blob", "3"}})
	checkQuery(t, w, "SELECT COUNT(*) FROM lineas_pedido", [][]string{{"3"}})
}
