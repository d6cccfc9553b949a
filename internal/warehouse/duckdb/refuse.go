package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// refusal says why a query may not call fn, "" when it may: DuckDB lets
// any statement read the database file and its WAL whatever confine says,
// and runs a checkpoint from a SELECT.
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

// refuseFunctions fails when q calls a function refusal refuses, read from
// DuckDB's own parse of q so that no spelling hides one.
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

// calledFunctions lists the functions q calls, lowercased. A statement
// DuckDB cannot serialise is read as a subquery; failing that, refused.
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

// collectFunctions collects the function_name of every node of a parse tree.
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
