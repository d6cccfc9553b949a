package warehouse

import (
	"strings"
	"testing"
)

func TestViewSQL(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		dialect Dialect
		qualify func(string) string
	}{
		{"view.accumulating.duckdb.sql", Accumulating, DuckDB, nil},
		{"view.accumulating.bigquery.sql", Accumulating, BigQuery, bqQualify},
		{"view.discarding.duckdb.sql", Discarding, DuckDB, nil},
		{"view.discarding.bigquery.sql", Discarding, BigQuery, bqQualify},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ViewSQL(tc.mode, tc.dialect, tc.qualify)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, got)
			if !strings.HasPrefix(got, "SELECT "+strings.Join(ViewColumns, ", ")+"\n") {
				t.Errorf("the view does not select exactly %v first", ViewColumns)
			}
		})
	}
}

// The view's columns come from the panes table, named as the contract says.
func TestViewColumnsExistInPanes(t *testing.T) {
	panes, err := Lookup(VentasHoraPaisPaneles)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ViewColumns {
		if panes.Column(c) < 0 {
			t.Errorf("view column %s is not a column of %s", c, VentasHoraPaisPaneles)
		}
	}
}

func TestViewSQLErrors(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		dialect Dialect
	}{
		{"unknown mode", "SOMETIMES", DuckDB},
		{"lower-case mode", "accumulating", DuckDB},
		{"unknown dialect", Accumulating, Dialect("")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if sql, err := ViewSQL(tc.mode, tc.dialect, nil); err == nil {
				t.Errorf("rendered, want an error:\n%s", sql)
			}
		})
	}
}
