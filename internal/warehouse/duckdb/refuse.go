package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// refusal says why a query may not call the function fn, "" when it may.
// The confinement (confine) shuts out every file but the database's own:
// DuckDB lets any statement read the database file and its WAL whatever
// allowed_directories says, and runs a checkpoint from a SELECT.
func refusal(fn string) string {
	switch {
	case strings.HasPrefix(fn, "read_"), strings.HasPrefix(fn, "parquet_"), fn == "glob", fn == "sniff_csv":
		return "a query reads the warehouse's tables, never a file"
	case fn == "checkpoint", fn == "force_checkpoint":
		return "a query may not write the database"
	case fn == "query", fn == "json_execute_serialized_sql":
		return "it runs SQL of its own, which is not checked"
	case strings.HasPrefix(fn, "arrow_scan"):
		return "it reads memory by address"
	case strings.HasPrefix(fn, "enable_"), strings.HasPrefix(fn, "disable_"), fn == "truncate_duckdb_logs":
		return "a query may not change how the engine runs"
	}
	return ""
}

// refuseFunctions fails when q calls a function that refusal refuses. It
// reads the calls from DuckDB's own parse of q (json_serialize_sql), so
// that no spelling (quotes, capitals, a schema, a CTE) hides one.
func refuseFunctions(ctx context.Context, conn *sql.Conn, q string) error {
	calls, err := calledFunctions(ctx, conn, q)
	if err != nil {
		return err
	}
	for _, fn := range calls {
		if why := refusal(fn); why != "" {
			return fmt.Errorf("%s() is refused: %s", fn, why)
		}
	}
	return nil
}

// calledFunctions lists the functions q calls, table functions included,
// lowercased. A statement DuckDB cannot serialise is read as the subquery
// of a SELECT; if that fails too it cannot be checked, and is refused.
func calledFunctions(ctx context.Context, conn *sql.Conn, q string) ([]string, error) {
	var parse struct {
		Error        bool   `json:"error"`
		ErrorMessage string `json:"error_message"`
		Statements   []any  `json:"statements"`
	}
	for _, text := range []string{q, "SELECT * FROM (\n" + q + "\n) AS q"} {
		var js string
		if err := conn.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR)", text).Scan(&js); err != nil {
			return nil, fmt.Errorf("check the functions it calls: %w", err)
		}
		if err := json.Unmarshal([]byte(js), &parse); err != nil {
			return nil, fmt.Errorf("check the functions it calls: %w", err)
		}
		if !parse.Error {
			var calls []string
			collectFunctions(parse.Statements, &calls)
			return calls, nil
		}
	}
	return nil, fmt.Errorf("the functions it calls cannot be checked (%s): send it as a plain SELECT", parse.ErrorMessage)
}

// collectFunctions walks a serialised parse tree: every call, scalar or
// table function, is a node with a function_name.
func collectFunctions(node any, calls *[]string) {
	switch n := node.(type) {
	case map[string]any:
		if fn, ok := n["function_name"].(string); ok {
			*calls = append(*calls, strings.ToLower(fn))
		}
		for _, v := range n {
			collectFunctions(v, calls)
		}
	case []any:
		for _, v := range n {
			collectFunctions(v, calls)
		}
	}
}
