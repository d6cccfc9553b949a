package warehouse_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// queryCallers are the only product folders (or files, or file#function)
// that may call a Query(ctx, sql), QueryRows(ctx, sql, sink...) or
// QueryTyped method: `alpipe query` (the command, its client, the server's
// query endpoint) and the adapters that implement the port. Everything else
// reads through the named reads.
var queryCallers = []string{
	"cmd/alpipe",                       // alpipe query
	"internal/client",                  // its client of /_local/query
	"internal/local/queryhandler.go",   // /_local/query
	"internal/warehouse/bigquery",      // the adapters
	"internal/warehouse/duckdb",        //
	"internal/warehouse/warehousetest", // the port's conformance suite
}

// TestOnlyAlpipeQueryRunsSQL: the warehouse's SQL method serves `alpipe
// query` alone. A product package that needs to read the warehouse adds a
// named read to this package (reads_*.go), which warehousetest then runs
// against every adapter, instead of writing SQL.
func TestOnlyAlpipeQueryRunsSQL(t *testing.T) {
	root := filepath.Join("..", "..")
	var offenders []string
	for _, top := range []string{"internal", "cmd", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			file := rel + "/" + filepath.Base(path)
			if slices.Contains(queryCallers, rel) || slices.Contains(queryCallers, file) || strings.HasSuffix(rel, "test") {
				return nil // allowed, or a test-helper package (ingesttest, ...)
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && slices.Contains(queryCallers, file+"#"+fn.Name.Name) {
					continue
				}
				ast.Inspect(decl, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					switch {
					case sel.Sel.Name == "Query" && len(call.Args) == 2,
						sel.Sel.Name == "QueryRows" && len(call.Args) >= 3,
						sel.Sel.Name == "QueryTyped" && len(call.Args) == 4:
						offenders = append(offenders, file)
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(offenders) > 0 {
		t.Errorf("these files call the warehouse's SQL method, which only `alpipe query` may use; add a named read to package warehouse instead:\n%s", strings.Join(offenders, "\n"))
	}
}
