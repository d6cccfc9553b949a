package deploy

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contractRejectCodes lists every reject code the ingest can put in the
// `rejects` map of its per-file log line: the row-level constants of
// internal/contract and internal/ingest (read from source, so this does not
// depend on those packages compiling), and "<column>:<rule>" for every rule
// a feed declaration in internal/contract/feeds enables.
func contractRejectCodes(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	codes := map[string]bool{}
	constName := regexp.MustCompile(`^[cC]ode[A-Z]`)
	for _, pkg := range []string{"contract", "ingest"} {
		files, err := parseGoFiles(filepath.Join(root, "internal", pkg))
		if err != nil {
			t.Fatalf("parse internal/%s: %v", pkg, err)
		}

		for _, f := range files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !constName.MatchString(n.Name) || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							codes[s] = true
						}
					}
				}
			}
		}

	}
	if len(codes) == 0 {
		t.Fatal("no row-level reject code constants found")
	}

	type column struct {
		Name          string      `json:"name"`
		Type          string      `json:"type"`
		Required      bool        `json:"required"`
		Min           json.Number `json:"min"`
		Max           json.Number `json:"max"`
		GreaterThan   json.Number `json:"greater_than"`
		LessThan      json.Number `json:"less_than"`
		Pattern       string      `json:"pattern"`
		AllowedSet    string      `json:"allowed_set"`
		AllowedValues []string    `json:"allowed_values"`
		MaxRunes      int         `json:"max_runes"`
	}
	var decl struct {
		Columns    []column `json:"columns"`
		DateColumn string   `json:"date_column"`
		Derived    []struct {
			Name string `json:"name"`
		} `json:"derived"`
	}
	feeds, err := filepath.Glob(filepath.Join(root, "internal", "contract", "feeds", "*.json"))
	if err != nil || len(feeds) == 0 {
		t.Fatalf("no feed declarations found (err=%v)", err)
	}
	for _, p := range feeds {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		decl.Columns, decl.DateColumn, decl.Derived = nil, "", nil
		if err := json.Unmarshal(b, &decl); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, c := range decl.Columns {
			add := func(rule string) { codes[c.Name+":"+rule] = true }
			if c.Required {
				add("required")
			}
			switch c.Type {
			case "INT64":
				add("invalid_int")
				add("out_of_range")
			case "NUMERIC":
				add("invalid_numeric")
				add("out_of_range")
				add("too_precise")
			case "DATE":
				add("invalid_date")
			}
			if c.Min != "" || c.GreaterThan != "" {
				add("below_min")
			}
			if c.Max != "" || c.LessThan != "" {
				add("above_max")
			}
			if c.Pattern != "" {
				add("pattern")
			}
			if c.MaxRunes > 0 {
				add("too_long")
			}
			switch {
			case c.AllowedSet == "iso3166-1-alpha2":
				add("not_iso3166")
			case c.AllowedSet != "" || len(c.AllowedValues) > 0:
				add("not_allowed")
			}
		}
		// The date column partitions its table by DAY: a date BigQuery cannot
		// place in a partition is a row-level rejection of its own.
		if decl.DateColumn != "" {
			codes[decl.DateColumn+":out_of_partition_range"] = true
		}
		for _, d := range decl.Derived {
			codes[d.Name+":required"] = true
			codes[d.Name+":out_of_range"] = true
		}
	}
	return keysOf(codes)
}

// Each reject code gets a metric, so "how many rows were rejected, and why"
// can be charted per reason; a contract change that adds a rule must add
// its code to var.reject_codes.
func TestRejectCodeMetricsCoverTheContracts(t *testing.T) {
	cfg := loadTerraform(t)
	ev := newEvaluator(t, cfg, nil)
	var got []string
	for _, v := range ev.vars["reject_codes"].AsValueSlice() {
		got = append(got, v.AsString())
	}
	sort.Strings(got)
	if diff := cmp.Diff(contractRejectCodes(t), got); diff != "" {
		t.Errorf("var.reject_codes default (-codes the ingest can log +terraform):\n%s", diff)
	}
}
