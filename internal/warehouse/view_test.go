package warehouse

import (
	"strings"
	"testing"
)

// hourly is the view ventas_hora_pais in mode.
func hourly(mode string) View {
	return View{Name: VentasHoraPais, Panes: VentasHoraPaisPaneles, Key: "pais", Accumulation: mode}
}

func TestViewSQL(t *testing.T) {
	tests := []struct {
		name, mode string
		dialect    Dialect
		qualify    func(string) string
	}{
		{"view.accumulating.duckdb.sql", Accumulating, DuckDB, Unqualified},
		{"view.accumulating.bigquery.sql", Accumulating, BigQuery, bqQualify},
		{"view.discarding.duckdb.sql", Discarding, DuckDB, Unqualified},
		{"view.discarding.bigquery.sql", Discarding, BigQuery, bqQualify},
	}
	viewSQL := func(t *testing.T, v View, d Dialect, qualify func(string) string) string {
		t.Helper()
		sql, err := v.SQL(d, qualify)
		if err != nil {
			t.Fatal(err)
		}
		return sql
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := viewSQL(t, hourly(tc.mode), tc.dialect, tc.qualify)
			golden(t, tc.name, got)
			if !strings.HasPrefix(got, "SELECT "+strings.Join(ViewColumns, ", ")+"\n") {
				t.Errorf("the view does not select exactly %v first", ViewColumns)
			}
			// A session view is the same view, less the sessions that merged
			// into another, as terraform/sql/view_*.sql says.
			v := View{Name: "sesiones_cliente", Panes: "sesiones_cliente_paneles", Key: "cliente_id",
				Accumulation: tc.mode, Session: true}
			session := viewSQL(t, v, tc.dialect, tc.qualify)
			golden(t, strings.Replace(tc.name, "view.", "view.session.", 1), session)
			v.Session = false
			if plain := viewSQL(t, v, tc.dialect, tc.qualify); session != plain+" AND timing != 'MERGED'" {
				t.Errorf("session view is not the view plus a MERGED filter:\n%s\n%s", session, plain)
			}
		})
	}
	// The sliding aggregation's view reads its own panes table by its own key.
	sku := View{Name: "ventas_sku_hora_movil", Panes: "ventas_sku_hora_movil_paneles", Key: "sku",
		Accumulation: Accumulating}
	golden(t, "view.sku.accumulating.duckdb.sql", viewSQL(t, sku, DuckDB, Unqualified))
}

func TestViewSQLErrors(t *testing.T) {
	tests := []struct {
		name, mode string
		dialect    Dialect
	}{
		{"unknown mode", "SOMETIMES", DuckDB},
		{"lower-case mode", "accumulating", DuckDB},
		{"unknown dialect", Accumulating, Dialect("")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if sql, err := hourly(tc.mode).SQL(tc.dialect, Unqualified); err == nil {
				t.Errorf("rendered, want an error:\n%s", sql)
			}
		})
	}
}
