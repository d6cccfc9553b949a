package deploy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// One source of truth: Terraform reads each fixed table's schema from the
// very JSON file the Go code embeds (byte for byte: terraform test), builds
// each panes table from the same template and declarations as
// warehouse.PanesTable, and declares the layout tables.go declares: every
// table of warehouse.Tables(), and no other, with the same schema,
// partitioning and clustering (module.json, as planned).
func TestTableSchemasMatchWarehouse(t *testing.T) {
	tables := readModuleData(t).Tables
	var want []string
	for _, tb := range warehouse.Tables() {
		want = append(want, tb.Name)
	}
	if diff := cmp.Diff(want, keysOf(tables)); diff != "" {
		t.Fatalf("tables (-warehouse +terraform):\n%s", diff)
	}
	for name, tf := range tables {
		t.Run(name, func(t *testing.T) {
			wt, err := warehouse.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wt.Schema, tf.Schema); diff != "" {
				t.Errorf("schema (-warehouse.Lookup +terraform):\n%s", diff)
			}
			if tf.Partition != wt.PartitionField {
				t.Errorf("partition field = %q, tables.go says %q", tf.Partition, wt.PartitionField)
			}
			if diff := cmp.Diff(wt.Clustering, tf.Clustering); diff != "" {
				t.Errorf("clustering (-tables.go +terraform):\n%s", diff)
			}
		})
	}
}

// Terraform reads the declarations the services embed: the same
// aggregations, with the same keys and accumulation modes.
func TestTerraformReadsTheDeclarations(t *testing.T) {
	decls, err := aggregation.Default()
	if err != nil {
		t.Fatal(err)
	}
	type agg struct{ Name, Key, Accumulation string }
	var want, got []agg
	for _, d := range decls {
		want = append(want, agg{d.Name, d.Key, string(d.Accumulation)})
	}
	views := readModuleData(t).Views
	for _, name := range keysOf(views) {
		got = append(got, agg{name, views[name].Key, views[name].Accumulation})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregations (-internal/aggregation +terraform):\n%s", diff)
	}
}

// Each view is defined once, by internal/warehouse's View.SQL (the embedded
// warehouse creates it from there); the Terraform SQL must say the same for
// every declared aggregation, in both accumulation modes (module.json holds
// both; terraform test holds the planned view to its declared mode's, and
// checks use_legacy_sql = false and the table_id).
func TestViewMatchesWarehouseDefinition(t *testing.T) {
	views := readModuleData(t).Views
	d, err := tfconfig.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	qualify := func(table string) string { return "`" + d.Project + "." + d.Dataset + "." + table + "`" }
	if wv := warehouse.Views(); len(wv) != len(views) {
		t.Fatalf("%d views in warehouse.Views(), %d in Terraform", len(wv), len(views))
	}
	for _, wv := range warehouse.Views() {
		for _, mode := range []string{warehouse.Accumulating, warehouse.Discarding} {
			t.Run(wv.Name+"/"+mode, func(t *testing.T) {
				got, ok := views[wv.Name].SQL[mode]
				if !ok {
					t.Fatalf("no view %s in %s mode in Terraform", wv.Name, mode)
				}
				wv.Accumulation = mode
				want, err := wv.SQL(warehouse.BigQuery, qualify)
				if err != nil {
					t.Fatal(err)
				}
				if got != normaliseSQL(want) {
					t.Errorf("Terraform view differs from warehouse View.SQL(BigQuery):\nterraform: %s\nwarehouse: %s", got, normaliseSQL(want))
				}
				if panes := qualify(wv.Panes); !strings.Contains(got, "FROM "+panes) {
					t.Errorf("view does not read %s", panes)
				}
				sel := regexp.MustCompile(`^SELECT (.*?) FROM `).FindStringSubmatch(got)
				if sel == nil || !cmp.Equal(strings.Split(sel[1], ", "), wv.Columns()) {
					t.Errorf("view columns %v, want %v", sel, wv.Columns())
				}
			})
		}
	}
}

// The tables and the view of ventas_hora_pais keep their state: its panes
// table is still google_bigquery_table.table["ventas_hora_pais_paneles"]
// (TestTableSchemasMatchWarehouse), and its view, the module's only one
// before aggregations were declared, moves to the per-aggregation resource
// instead of being destroyed and created again.
func TestVentasHoraPaisKeepsItsAddresses(t *testing.T) {
	m := parseModule(t)
	var moved [][2]string
	for _, b := range m.blocksOf("moved") {
		moved = append(moved, [2]string{m.text(b.Body.Attributes["from"].Expr), m.text(b.Body.Attributes["to"].Expr)})
	}
	want := [][2]string{{"google_bigquery_table.ventas_hora_pais", `google_bigquery_table.view["ventas_hora_pais"]`}}
	if diff := cmp.Diff(want, moved); diff != "" {
		t.Errorf("moved blocks (-want +got):\n%s", diff)
	}
	if _, ok := m.resources()["google_bigquery_table.ventas_hora_pais"]; ok {
		t.Error("google_bigquery_table.ventas_hora_pais is declared again: the moved block would have nothing to move")
	}
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
)

// normaliseSQL drops comments and collapses whitespace, as
// terraform/tests/deployment.tftest.hcl does to module.json's SQL.
func normaliseSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, " ")
	s = sqlSpace.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, "( ", "(")
	s = strings.ReplaceAll(s, " )", ")")
	return strings.TrimSpace(s)
}
