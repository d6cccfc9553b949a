package bqfake

import (
	"fmt"
	"regexp"
	"strings"

	bq "google.golang.org/api/bigquery/v2"
)

// The fake does not parse SQL; it finds the tables a statement reads with
// a few patterns, enough to refuse a query of a table that does not exist
// (as BigQuery does when it compiles it) without recording its answer.
var (
	comment    = regexp.MustCompile(`(?s)--[^\n]*|#[^\n]*|/\*.*?\*/`)
	literal    = regexp.MustCompile(`'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"`)
	extractFn  = regexp.MustCompile(`(?i)\bEXTRACT\s*\([^()]*\)`)
	cteName    = regexp.MustCompile(`(?i)\b([A-Za-z_][A-Za-z0-9_]*)\s+AS\s*\(`)
	tableAfter = regexp.MustCompile("(?i)\\b(?:FROM|JOIN)\\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_.-]*)")
)

// stripLiterals drops comments and string literals, so that neither a
// parameter nor a table name inside them counts.
func stripLiterals(sql string) string {
	return literal.ReplaceAllString(comment.ReplaceAllString(sql, " "), "''")
}

// checkTables reports the first table the SQL reads that the dataset does
// not hold, in BigQuery's words; the caller holds mu.
func (f *Fake) checkTables(sql string, def *bq.DatasetReference) error {
	// A parameter named like a keyword (@from) is not one.
	s := paramRef.ReplaceAllString(extractFn.ReplaceAllString(stripLiterals(sql), "0"), "0")
	ctes := map[string]bool{}
	for _, m := range cteName.FindAllStringSubmatch(s, -1) {
		ctes[strings.ToLower(m[1])] = true
	}
	for _, loc := range tableAfter.FindAllStringSubmatchIndex(s, -1) {
		ref := s[loc[2]:loc[3]]
		if rest := strings.TrimSpace(s[loc[1]:]); strings.HasPrefix(rest, "(") {
			continue // a table function such as UNNEST(...)
		}
		name := strings.Trim(ref, "`")
		parts := strings.Split(name, ".")
		var project, dataset, tbl string
		switch len(parts) {
		case 1:
			if ctes[strings.ToLower(name)] {
				continue
			}
			if def == nil || def.DatasetId == "" {
				return fmt.Errorf("Table name %q missing dataset while no default dataset is set in the request.", name)
			}
			project, dataset, tbl = def.ProjectId, def.DatasetId, name
		case 2:
			project, dataset, tbl = f.project, parts[0], parts[1]
			if def != nil && def.ProjectId != "" {
				project = def.ProjectId
			}
		case 3:
			project, dataset, tbl = parts[0], parts[1], parts[2]
		default:
			return fmt.Errorf("Invalid table name: %s", ref)
		}
		if project == "" {
			project = f.project
		}
		if project != f.project || dataset != f.dataset {
			return fmt.Errorf("Not found: Dataset %s:%s was not found", project, dataset)
		}
		if _, ok := f.tables[tbl]; !ok && !f.views[tbl] {
			return fmt.Errorf("Not found: Table %s:%s.%s was not found", project, dataset, tbl)
		}
	}
	return nil
}
