package warehouse

import (
	"errors"
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

// TestAggregateSQL pins the SQL each engine runs to refresh an aggregate.
func TestAggregateSQL(t *testing.T) {
	a, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	bqRows, bqOverflows, err := a.DaySQL(BigQuery, bqQualify, 20526)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := a.GroupsSQL(DuckDB, Unqualified, []int32{20526, 20527})
	if err != nil {
		t.Fatal(err)
	}
	rows, overflows, err := a.RefreshSQL(DuckDB, "refresh_groups")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{
		"ventas_diarias_sku.bigquery.sql":          bqRows,
		"ventas_diarias_sku.overflow.bigquery.sql": bqOverflows,
		"ventas_diarias_sku.groups.duckdb.sql":     groups,
		"ventas_diarias_sku.rows.duckdb.sql":       rows,
		"ventas_diarias_sku.overflows.duckdb.sql":  overflows,
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, got) })
	}
	if _, err := a.GroupsSQL(DuckDB, Unqualified, nil); err == nil {
		t.Error("GroupsSQL of no dates succeeded, want an error")
	}
}

func TestParseOverflow(t *testing.T) {
	a, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		row     []*string
		want    []Overflow
		wantErr string
	}{
		{name: "one sum, shortest decimal", row: []*string{str("2026-03-14"), str("X"), nil, str("100000000000000000000000000000.999999990")},
			want: []Overflow{{Date: 20526, Keys: []string{"X"}, Column: "importe", Sum: "100000000000000000000000000000.99999999"}}},
		{name: "both sums, a whole one without decimals",
			row: []*string{str("2026-03-14"), str("X"), str("18000000000000000000"), str("-100000000000000000000000000000.000000000")},
			want: []Overflow{{Date: 20526, Keys: []string{"X"}, Column: "unidades", Sum: "18000000000000000000"},
				{Date: 20526, Keys: []string{"X"}, Column: "importe", Sum: "-100000000000000000000000000000"}}},
		{name: "no sum out of range", row: []*string{str("2026-03-14"), str("X"), nil, nil}, wantErr: "no sum out of range"},
		{name: "short row", row: []*string{str("2026-03-14"), str("X"), nil}, wantErr: "3 cells, want 4"},
		{name: "NULL date", row: []*string{nil, str("X"), nil, str("1")}, wantErr: "cell 0 is NULL"},
		{name: "bad date", row: []*string{str("14/03/2026"), str("X"), nil, str("1")}, wantErr: "date"},
		{name: "not a number", row: []*string{str("2026-03-14"), str("X"), nil, str("lots")}, wantErr: "not a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.ParseOverflow(tc.row)
			if err != nil || tc.wantErr != "" {
				if err == nil || tc.wantErr == "" || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestOverflowError(t *testing.T) {
	a, err := LookupAggregate(VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.OverflowError(nil); err != nil {
		t.Errorf("OverflowError of none = %v, want nil", err)
	}
	in := []Overflow{
		{Date: 20527, Keys: []string{"A"}, Column: "importe", Sum: "1e30"},
		{Date: 20526, Keys: []string{"B"}, Column: "importe", Sum: "2"},
		{Date: 20526, Keys: []string{"B"}, Column: "unidades", Sum: "3"},
		{Date: 20526, Keys: []string{"A"}, Column: "importe", Sum: "4"},
	}
	err = a.OverflowError(in)
	var oe *OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("OverflowError = %v, want an *OverflowError", err)
	}
	want := []Overflow{in[3], in[2], in[1], in[0]} // date, keys, then measure order
	if diff := cmp.Diff(want, oe.Overflows); diff != "" {
		t.Errorf("order (-want +got)\n%s", diff)
	}
	const msg = `aggregate ventas_diarias_sku: sums out of range (4), their groups left out: 2026-03-14 sku="A" importe=4; 2026-03-14 sku="B" unidades=3; 2026-03-14 sku="B" importe=2; 2026-03-15 sku="A" importe=1e30`
	if got := err.Error(); got != msg {
		t.Errorf("Error() = %q, want %q", got, msg)
	}
	if got, want := oe.Summary(2), `aggregate ventas_diarias_sku: sums out of range (4), their groups left out: 2026-03-14 sku="A" importe=4; 2026-03-14 sku="B" unidades=3; and 2 more`; got != want {
		t.Errorf("Summary(2) = %q, want %q", got, want)
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
			if sql, _, err := a.RefreshSQL(tc.dialect, "g"); err == nil {
				t.Errorf("rendered, want an error:\n%s", sql)
			}
			if sql, _, err := a.DaySQL(tc.dialect, Unqualified, 20526); err == nil {
				t.Errorf("rendered a date's refresh, want an error:\n%s", sql)
			}
		})
	}
	if _, err := LookupAggregate("nope"); err == nil {
		t.Error("LookupAggregate of an unknown name succeeded, want an error")
	}
}
