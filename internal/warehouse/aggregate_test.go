package warehouse

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden SQL files in testdata/")

// golden compares got with testdata/name, rewriting it under -update. The
// rendered SQL is reviewed as a file: it is what BigQuery and DuckDB run.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), got); diff != "" {
		t.Errorf("%s (-want +got)\n%s", path, diff)
	}
}

func bqQualify(table string) string { return "`proj.ds." + table + "`" }

func TestAggregateSelectSQL(t *testing.T) {
	a, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dialect Dialect
		qualify func(string) string
	}{
		{"ventas_diarias_sku.duckdb.sql", DuckDB, nil},
		{"ventas_diarias_sku.bigquery.sql", BigQuery, bqQualify},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.SelectSQL(tc.dialect, tc.qualify)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, got)
		})
	}
}

func TestAggregateSelectDatesSQL(t *testing.T) {
	a, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.SelectDatesSQL(DuckDB, Unqualified, []int32{20526, 20527})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ventas_diarias_sku.dates.duckdb.sql", got)
	if _, err := a.SelectDatesSQL(DuckDB, Unqualified, nil); err == nil {
		t.Error("SelectDatesSQL of no dates succeeded, want an error")
	}
}

// Every aggregate must render: its columns are exactly its table's schema,
// in order, computed from columns its source has.
func TestAggregatesMatchTheirTables(t *testing.T) {
	for name, a := range Aggregates() {
		t.Run(name, func(t *testing.T) {
			if a.Table != name {
				t.Errorf("aggregate registered as %s writes %s", name, a.Table)
			}
			for _, d := range []Dialect{DuckDB, BigQuery} {
				if _, err := a.SelectSQL(d, nil); err != nil {
					t.Errorf("%s: %v", d, err)
				}
			}
		})
	}
}

func TestAggregateRenderErrors(t *testing.T) {
	good, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(a *Aggregate)
		dialect Dialect
	}{
		{"unknown dialect", func(*Aggregate) {}, Dialect("oracle")},
		{"unknown table", func(a *Aggregate) { a.Table = "nope" }, DuckDB},
		{"unknown source", func(a *Aggregate) { a.Source = "nope" }, DuckDB},
		{"missing measure", func(a *Aggregate) { a.Measures = a.Measures[:2] }, DuckDB},
		{"extra measure", func(a *Aggregate) { a.Measures = append(a.Measures, Measure{Column: "extra", Func: "COUNT"}) }, DuckDB},
		{"sum of a string", func(a *Aggregate) { a.Measures = []Measure{{"unidades", "SUM", "sku"}, a.Measures[1], a.Measures[2]} }, DuckDB},
		{"sum of a missing column", func(a *Aggregate) { a.Measures = []Measure{{"unidades", "SUM", "nope"}, a.Measures[1], a.Measures[2]} }, DuckDB},
		{"unsupported function", func(a *Aggregate) {
			a.Measures = []Measure{{"unidades", "AVG", "cantidad"}, a.Measures[1], a.Measures[2]}
		}, DuckDB},
		{"missing lineage column", func(a *Aggregate) { a.GenerationColumn = "nope" }, DuckDB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := good
			a.Measures = append([]Measure(nil), good.Measures...)
			tc.mutate(&a)
			if sql, err := a.SelectSQL(tc.dialect, nil); err == nil {
				t.Errorf("rendered, want an error:\n%s", sql)
			}
		})
	}
	if _, err := LookupAggregate("nope"); err == nil {
		t.Error("LookupAggregate of an unknown name succeeded, want an error")
	}
}
