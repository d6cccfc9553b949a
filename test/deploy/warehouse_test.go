package deploy

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// One source of truth: Terraform reads each table's schema from the same
// JSON file the Go code embeds, and declares the layout tables.go declares.
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
	call, ok := schema.Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "file" {
		t.Fatalf("schema must be file(...) of internal/warehouse/schema/<table>.json, not an inline copy (got %T)", schema.Expr)
	}
	for name, value := range tables {
		t.Run(name, func(t *testing.T) {
			wt, err := warehouse.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			each := [2]cty.Value{cty.StringVal(name), value}
			path := ev.str(t, call.Args[0], &each)
			if !strings.HasSuffix(path, "/internal/warehouse/schema/"+name+".json") {
				t.Errorf("schema file %s is not the warehouse's own schema/%s.json", path, name)
			}
			var got []warehouse.Field
			if err := json.Unmarshal([]byte(ev.str(t, schema.Expr, &each)), &got); err != nil {
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
	dp, ok := r.Block.Body.Attributes["deletion_protection"]
	if !ok || traversal(dp.Expr) != "var.deletion_protection" || !ev.vars["deletion_protection"].True() {
		t.Error("tables must have deletion_protection = var.deletion_protection, defaulting to true")
	}
}

// The view is defined once, by internal/warehouse.ViewSQL (the embedded
// warehouse creates it from there); the Terraform SQL must say the same.
func TestViewMatchesWarehouseDefinition(t *testing.T) {
	cfg := loadTerraform(t)
	view := cfg.lookup(t, "google_bigquery_table.ventas_hora_pais")
	if got := newEvaluator(t, cfg, nil).str(t, view.Block.Body.Attributes["table_id"].Expr, nil); got != warehouse.VentasHoraPais {
		t.Errorf("view table_id = %q, want %q", got, warehouse.VentasHoraPais)
	}
	if a, ok := attr(view.Block, "view", "use_legacy_sql"); !ok || a.Expr.(*hclsyntax.LiteralValueExpr).Val.True() {
		t.Error("the view must use GoogleSQL (use_legacy_sql = false)")
	}
	panes := "`alpinashop-datos.alpinashop_analitica." + warehouse.VentasHoraPaisPaneles + "`"
	qualify := func(table string) string { return "`alpinashop-datos.alpinashop_analitica." + table + "`" }
	for _, mode := range []string{warehouse.Accumulating, warehouse.Discarding} {
		t.Run(mode, func(t *testing.T) {
			ev := deployed(t, cfg, map[string]cty.Value{
				"stream": cty.ObjectVal(map[string]cty.Value{"accumulation": cty.StringVal(mode)}),
			}).withConfigured(t, "google_bigquery_dataset", "google_bigquery_table")
			a, _ := attr(view.Block, "view", "query")
			got := normaliseSQL(ev.str(t, a.Expr, nil))
			want, err := warehouse.ViewSQL(mode, warehouse.BigQuery, qualify)
			if err != nil {
				t.Fatal(err)
			}
			if got != normaliseSQL(want) {
				t.Errorf("Terraform view differs from warehouse.ViewSQL(%s, BigQuery):\nterraform: %s\nwarehouse: %s", mode, got, normaliseSQL(want))
			}
			if !strings.Contains(got, "FROM "+panes) {
				t.Errorf("view does not read %s", panes)
			}
			sel := regexp.MustCompile(`^SELECT (.*?) FROM `).FindStringSubmatch(got)
			if sel == nil || !cmp.Equal(strings.Split(sel[1], ", "), warehouse.ViewColumns) {
				t.Errorf("view columns %v, want %v", sel, warehouse.ViewColumns)
			}
		})
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
