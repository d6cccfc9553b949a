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
		{"view.accumulating.duckdb.sql", Accumulating, DuckDB, nil},
		{"view.accumulating.bigquery.sql", Accumulating, BigQuery, bqQualify},
		{"view.discarding.duckdb.sql", Discarding, DuckDB, nil},
		{"view.discarding.bigquery.sql", Discarding, BigQuery, bqQualify},
	}
	sessions := View{Name: "sesiones_cliente", Panes: "sesiones_cliente_paneles", Key: "cliente_id", Session: true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hourly(tc.mode).SQL(tc.dialect, tc.qualify)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, got)
			if !strings.HasPrefix(got, "SELECT "+strings.Join(ViewColumns, ", ")+"\n") {
				t.Errorf("the view does not select exactly %v first", ViewColumns)
			}
		})
	}
	// The sliding aggregation's view reads its own panes table by its own key.
	t.Run("view.sku.accumulating.duckdb.sql", func(t *testing.T) {
		got, err := View{Name: "ventas_sku_hora_movil", Panes: "ventas_sku_hora_movil_paneles", Key: "sku", Accumulation: Accumulating}.SQL(DuckDB, nil)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "view.sku.accumulating.duckdb.sql", got)
	})
	// A session view is the same view, less the sessions that merged into
	// another, as terraform/sql/view_*.sql says.
	for _, tc := range tests {
		name := strings.Replace(tc.name, "view.", "view.session.", 1)
		t.Run(name, func(t *testing.T) {
			v := sessions
			v.Accumulation = tc.mode
			got, err := v.SQL(tc.dialect, tc.qualify)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, got)
			v.Session = false
			plain, err := v.SQL(tc.dialect, tc.qualify)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(got, " AND timing != 'MERGED'") || strings.TrimSuffix(got, " AND timing != 'MERGED'") != plain {
				t.Errorf("session view is not the view plus a MERGED filter at its end:\n%s\n%s", got, plain)
			}
		})
	}
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
			if sql, err := hourly(tc.mode).SQL(tc.dialect, nil); err == nil {
				t.Errorf("rendered, want an error:\n%s", sql)
			}
		})
	}
}
