package warehouse

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
	"github.com/alpinashop/alpipe/internal/window"
)

// ventas_hora_pais_paneles is the template file, partitioned by
// window_start, clustered by pais: built from its declaration, it must not
// move a column.
func TestVentasHoraPaisPanelesIsTheTemplate(t *testing.T) {
	want, err := schema.Lookup(VentasHoraPaisPaneles)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Lookup(VentasHoraPaisPaneles)
	if err != nil {
		t.Fatal(err)
	}
	want.Name, want.PartitionField, want.Clustering = VentasHoraPaisPaneles, "window_start", []string{"pais"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-schema file +Lookup):\n%s", diff)
	}
}

// Every declared aggregation has its panes table and its view; the tables
// are the fixed ones plus those.
func TestEveryDeclaredAggregationHasTableAndView(t *testing.T) {
	decls, err := aggregation.Default()
	if err != nil {
		t.Fatal(err)
	}
	wantTables := []string{LineasPedido, Opiniones, PedidosDescartados, VentasDiariasSKU}
	var wantViews []View
	for _, d := range decls {
		wantTables = append(wantTables, d.PanesTable())
		wantViews = append(wantViews, View{Name: d.Name, Panes: d.PanesTable(), Key: d.KeyField, Accumulation: string(d.Accumulation), Session: d.WindowType == aggregation.Session})
	}
	sort.Strings(wantTables)
	var got []string
	for _, tb := range Tables() {
		got = append(got, tb.Name)
	}
	if diff := cmp.Diff(wantTables, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantViews, Views()); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}
}

func TestPanesTable(t *testing.T) {
	template, err := Lookup(VentasHoraPaisPaneles)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		agg, key string
		gap      time.Duration
		changed  map[int]Field // the columns that differ from the template's, by index
		added    []Field
		wantErr  string
	}{
		{name: "customer key: only the key column", agg: "ventas_cliente", key: "cliente_id", changed: map[int]Field{
			3: {Name: "cliente_id", Type: String, Mode: "REQUIRED", Description: "aggregation key: customer"},
		}},
		{name: "SKU key: the key column and what the measures mean per line", agg: "ventas_sku_hora_movil", key: "sku", changed: map[int]Field{
			3: {Name: "sku", Type: String, Mode: "REQUIRED", Description: "aggregation key: SKU of the order line (trimmed, upper-cased); one cell per SKU of each order"},
			4: {Name: "importe", Type: Numeric, Mode: "REQUIRED", Description: "sum of cantidad x precio_unitario over the SKU's lines (accumulated or delta, see accumulation)"},
			5: {Name: "pedidos", Type: Int64, Mode: "REQUIRED", Description: "number of distinct orders with a line of the SKU"},
			6: {Name: "unidades", Type: Int64, Mode: "REQUIRED", Description: "sum of the quantities of the SKU's lines"},
		}},
		{name: "sessions: merged_into after the template's columns", agg: "sesiones_cliente", key: "cliente_id", gap: 30 * time.Minute, changed: map[int]Field{
			3: {Name: "cliente_id", Type: String, Mode: "REQUIRED", Description: "aggregation key: customer"},
		}, added: []Field{
			{Name: "merged_into", Type: Timestamp, Mode: "NULLABLE", Description: "For a MERGED pane, the window_start of the session this one merged into; null otherwise."},
		}},
		{name: "a key no declaration may have", agg: "x", key: "producto", wantErr: `describes no key "producto"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PanesTable(window.Spec{Name: tt.agg, KeyField: tt.key, Gap: tt.gap})
			if err != nil || tt.wantErr != "" {
				if err == nil || tt.wantErr == "" || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			want := template
			want.Schema = slices.Clone(template.Schema)
			want.Name, want.Clustering = tt.agg+"_paneles", []string{tt.key}
			for i, f := range tt.changed {
				want.Schema[i] = f
			}
			want.Schema = append(want.Schema, tt.added...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
