package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// One source of truth: Terraform reads each fixed table's schema from the
// very JSON file the Go code embeds, builds each panes table from the same
// template and declarations as warehouse.PanesTable, and declares the
// layout tables.go declares: every table of warehouse.Tables(), and no
// other, with the same schema, partitioning and clustering.
func TestTableSchemasMatchWarehouse(t *testing.T) {
	cfg := loadTerraform(t)
	ev := newEvaluator(t, cfg, nil)
	r := cfg.lookup(t, "google_bigquery_table.table")
	tables := ev.forEach(t, r)

	var want []string
	for _, tb := range warehouse.Tables() {
		want = append(want, tb.Name)
	}
	if diff := cmp.Diff(want, keysOf(tables)); diff != "" {
		t.Fatalf("tables (-warehouse +terraform):\n%s", diff)
	}

	schema := r.Block.Body.Attributes["schema"]
	for name, value := range tables {
		t.Run(name, func(t *testing.T) {
			wt, err := warehouse.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			each := [2]cty.Value{cty.StringVal(name), value}
			text := ev.str(t, schema.Expr, &each)
			if !strings.HasSuffix(name, aggregation.PanesSuffix) {
				// Not an inline copy: the file itself, byte for byte.
				file, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "warehouse", "schema", name+".json"))
				if err != nil {
					t.Fatal(err)
				}
				if text != string(file) {
					t.Errorf("schema of %s is not internal/warehouse/schema/%s.json as it stands", name, name)
				}
			}
			var got []warehouse.Field
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("schema of %s: %v", name, err)
			}
			if diff := cmp.Diff(wt.Schema, got); diff != "" {
				t.Errorf("schema (-warehouse.Lookup +terraform):\n%s", diff)
			}

			tp := nested(r.Block, "time_partitioning")
			if tp == nil {
				t.Fatal("no time_partitioning")
			}
			if got := ev.str(t, tp.Body.Attributes["type"].Expr, &each); got != "DAY" {
				t.Errorf("partitioning type = %s, want DAY", got)
			}
			if got := ev.str(t, tp.Body.Attributes["field"].Expr, &each); got != wt.PartitionField {
				t.Errorf("partition field = %q, tables.go says %q", got, wt.PartitionField)
			}
			var clustering []string
			for _, v := range ev.eval(t, r.Block.Body.Attributes["clustering"].Expr, &each).AsValueSlice() {
				clustering = append(clustering, v.AsString())
			}
			if diff := cmp.Diff(wt.Clustering, clustering); diff != "" {
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
	var want []agg
	for _, d := range decls {
		want = append(want, agg{d.Name, d.Key, string(d.Accumulation)})
	}
	cfg := loadTerraform(t)
	views := newEvaluator(t, cfg, nil).forEach(t, cfg.lookup(t, "google_bigquery_table.view"))
	var got []agg
	for _, name := range keysOf(views) {
		v := views[name]
		got = append(got, agg{name, v.GetAttr("key").AsString(), v.GetAttr("accumulation").AsString()})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregations (-internal/aggregation +terraform):\n%s", diff)
	}
}

// Each view is defined once, by internal/warehouse's View.SQL (the embedded
// warehouse creates it from there); the Terraform SQL must say the same for
// every declared aggregation, in both accumulation modes.
func TestViewMatchesWarehouseDefinition(t *testing.T) {
	cfg := loadTerraform(t)
	view := cfg.lookup(t, "google_bigquery_table.view")
	ev := deployed(t, cfg, nil).withConfigured(t, "google_bigquery_dataset", "google_bigquery_table")
	instances := ev.forEach(t, view)
	if a, ok := attr(view.Block, "view", "use_legacy_sql"); !ok || a.Expr.(*hclsyntax.LiteralValueExpr).Val.True() {
		t.Error("the view must use GoogleSQL (use_legacy_sql = false)")
	}
	qualify := func(table string) string {
		return "`" + ev.vars["project_id"].AsString() + "." + ev.vars["dataset_id"].AsString() + "." + table + "`"
	}
	views := warehouse.Views()
	if len(views) != len(instances) {
		t.Fatalf("%d views in warehouse.Views(), %d in Terraform", len(views), len(instances))
	}
	for _, wv := range views {
		for _, mode := range []string{warehouse.Accumulating, warehouse.Discarding} {
			t.Run(wv.Name+"/"+mode, func(t *testing.T) {
				decl, ok := instances[wv.Name]
				if !ok {
					t.Fatalf("no view %s in Terraform", wv.Name)
				}
				// The declaration as Terraform reads it, in this mode.
				attrs := decl.AsValueMap()
				attrs["accumulation"] = cty.StringVal(mode)
				each := [2]cty.Value{cty.StringVal(wv.Name), cty.ObjectVal(attrs)}
				if got := ev.str(t, view.Block.Body.Attributes["table_id"].Expr, &each); got != wv.Name {
					t.Errorf("view table_id = %q, want %q", got, wv.Name)
				}
				a, _ := attr(view.Block, "view", "query")
				got := normaliseSQL(ev.str(t, a.Expr, &each))
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
	cfg := loadTerraform(t)
	var moved [][2]string
	for _, name := range keysOf(cfg.Files) {
		for _, b := range cfg.Files[name].Body.(*hclsyntax.Body).Blocks {
			if b.Type == "moved" {
				moved = append(moved, [2]string{traversal(b.Body.Attributes["from"].Expr), traversal(b.Body.Attributes["to"].Expr)})
			}
		}
	}
	want := [][2]string{{"google_bigquery_table.ventas_hora_pais", `google_bigquery_table.view["ventas_hora_pais"]`}}
	if diff := cmp.Diff(want, moved); diff != "" {
		t.Errorf("moved blocks (-want +got):\n%s", diff)
	}
	if _, err := cfg.tf.Lookup("google_bigquery_table.ventas_hora_pais"); err == nil {
		t.Error("google_bigquery_table.ventas_hora_pais is declared again: the moved block would have nothing to move")
	}
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
)

// normaliseSQL drops comments and collapses whitespace.
func normaliseSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, " ")
	s = sqlSpace.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, "( ", "(")
	s = strings.ReplaceAll(s, " )", ")")
	return strings.TrimSpace(s)
}

func TestFirestoreTTLPolicies(t *testing.T) {
	cfg := loadTerraform(t)
	ev := newEvaluator(t, cfg, nil)
	db := cfg.lookup(t, "google_firestore_database.state")
	if got := ev.str(t, db.Block.Body.Attributes["type"].Expr, nil); got != "FIRESTORE_NATIVE" {
		t.Errorf("database type = %s, want FIRESTORE_NATIVE", got)
	}
	ttl := cfg.lookup(t, "google_firestore_field.ttl")
	groups := ev.forEach(t, ttl)
	// The collection groups whose documents the code writes with an
	// ExpireAt (ledger locks, orders dedup, tick lease, dead-letter dedup).
	for _, g := range []string{"ledger_locks", "orders", "control", "seen"} {
		if _, ok := groups[g]; !ok {
			t.Errorf("no TTL policy for collection group %s", g)
		}
	}
	for g, v := range groups {
		each := [2]cty.Value{cty.StringVal(g), v}
		if got := ev.str(t, ttl.Block.Body.Attributes["field"].Expr, &each); got != "expire_at" {
			t.Errorf("%s: TTL field %q, want expire_at (docstore.Doc.ExpireAt)", g, got)
		}
		if got := ev.str(t, ttl.Block.Body.Attributes["collection"].Expr, &each); got != g {
			t.Errorf("collection = %q, want %q", got, g)
		}
	}
	if nested(ttl.Block, "ttl_config") == nil {
		t.Error("google_firestore_field.ttl has no ttl_config block: no TTL policy would be created")
	}
	if traversal(ttl.Block.Body.Attributes["database"].Expr) != "google_firestore_database.state.name" {
		t.Error("TTL policies must target the alpipe database")
	}
}
