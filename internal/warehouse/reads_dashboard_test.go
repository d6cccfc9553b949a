package warehouse_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestDashboardReadsBoundPartitions: every table the dashboard's reads
// scan is filtered on its partitioning column by a parameter, so that
// BigQuery prunes to the days asked for.
func TestDashboardReadsBoundPartitions(t *testing.T) {
	views := map[string]string{}
	for _, v := range warehouse.Views() {
		views[v.Name] = v.Panes
	}
	tests := []struct {
		name, read string
		table      string // a table or a view (then its panes table's partitioning)
		want       string // the bound, as the SQL writes it
	}{
		{"newest windows of ventas_hora_pais", "newest_windows", warehouse.VentasHoraPais, "window_start >= @start_time"},
		{"newest windows of the SKU view", "newest_windows:ventas_sku_hora_movil", "ventas_sku_hora_movil", "window_start >= @start_time"},
		{"summary: the discards", "discard_summary", warehouse.PedidosDescartados, "received_at >= @since"},
		{"summary: the countries", "discard_summary", warehouse.VentasHoraPais, "window_start >= @start_time"},
	}
	queries := map[string]string{}
	for _, q := range warehouse.NamedQueries() {
		queries[q.Name] = q.SQL
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql, ok := queries[tt.read]
			if !ok {
				t.Fatalf("no named read %s", tt.read)
			}
			table := tt.table
			if panes, ok := views[table]; ok {
				table = panes
			}
			tb, err := warehouse.Lookup(table)
			if err != nil {
				t.Fatal(err)
			}
			col := tb.PartitionField
			if col == "" || !strings.HasPrefix(tt.want, col+" ") {
				t.Fatalf("%s is partitioned by %q; the test expects a bound %q on it", table, col, tt.want)
			}
			// Each FROM of the table is followed by its WHERE with the bound.
			n := strings.Count(sql, "FROM "+tt.table+"\n")
			if n == 0 {
				t.Fatalf("%s does not read %s:\n%s", tt.read, tt.table, sql)
			}
			for i, part := range strings.Split(sql, "FROM "+tt.table+"\n")[1:] {
				where, _, _ := strings.Cut(strings.TrimSpace(part), "\n")
				if !strings.HasPrefix(where, "WHERE ") || !strings.Contains(where, tt.want) {
					t.Errorf("%s: read %d of %s is filtered by %q, want %q (its partitioning column)", tt.read, i+1, tt.table, where, tt.want)
				}
			}
		})
	}
}

// statementReader records the statement it is asked and answers nothing.
type statementReader struct{ got warehouse.Statement }

func (r *statementReader) Read(_ context.Context, s warehouse.Statement) (warehouse.Result, error) {
	r.got = s
	return warehouse.Result{}, nil
}
