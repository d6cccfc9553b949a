package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func TestTablesListsEveryTableAndTheView(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(context.Background(), []string{"tables", "--format", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var docs []tableDoc
	if err := json.Unmarshal(out.Bytes(), &docs); err != nil {
		t.Fatalf("tables --format json: %v\n%s", err, out.String())
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Table+" "+d.Kind)
	}
	var want []string
	for _, tb := range warehouse.Tables() {
		want = append(want, tb.Name+" table")
	}
	for _, v := range warehouse.Views() {
		want = append(want, v.Name+" view")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

// TestListings: what each listing and validate print, and what they refuse.
func TestListings(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string // in the output
		wantErr string
	}{
		{name: "a table", args: []string{"schema", "lineas_pedido"}, want: []string{"column", "importe", "NUMERIC"}},
		{name: "the view names what it reads", args: []string{"schema", "ventas_hora_pais"}, want: []string{"a view over ventas_hora_pais_paneles", "window_start"}},
		{name: "a typo gets a suggestion", args: []string{"schema", "lineas_pedid"}, wantErr: `did you mean "lineas_pedido"`},
		{name: "contracts", args: []string{"contracts"},
			want: []string{"lineas_pedido:", "opiniones:", "precio_unitario", "NUMERIC", "table:   lineas_pedido"}},
		{name: "validate of the dirty ERP file in JSON",
			args:    []string{"validate", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv", "--format", "json"},
			want:    []string{`"feed": "lineas_pedido"`, `"rows_read": `, `"rows_rejected": `, `"examples": [`, `"line": `},
			wantErr: "rows would be quarantined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := dispatch(context.Background(), tt.args, &out)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// The text listing, whole: what a person reads to learn what a deployment
// computes without opening the declarations.
func TestAggregationsText(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"aggregations"}, &out); err != nil {
		t.Fatal(err)
	}
	want := `sesiones_cliente: Sales per customer session: a customer's orders no more than 30 minutes apart form one session.
  window:   session, gap 30m   key: cliente_id   measures: importe, pedidos, unidades
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    sesiones_cliente_paneles   view: sesiones_cliente (accumulating)
  file:     internal/aggregation/declarations/sesiones_cliente.json

ventas_hora_pais: Sales per hour and country: the hourly dashboard.
  window:   fixed 1h   key: pais   measures: importe, pedidos, unidades
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    ventas_hora_pais_paneles   view: ventas_hora_pais (accumulating)
  file:     internal/aggregation/declarations/ventas_hora_pais.json

ventas_sku_hora_movil: Sales per SKU over the last hour, every quarter of an hour: how a campaign product is selling.
  window:   sliding 1h every 15m   key: sku   measures: importe, unidades, pedidos
  timing:   out-of-orderness 10m, idle 5m, early 1m, lateness 2h, late delay 1m
  panes:    ventas_sku_hora_movil_paneles   view: ventas_sku_hora_movil (accumulating)
  file:     internal/aggregation/declarations/ventas_sku_hora_movil.json
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The JSON listing keeps the one JSON style: snake_case keys, durations in
// seconds under <name>_seconds, the durations a window does not use left
// out. The values the text listing shows come from the same documents.
func TestAggregationsJSON(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"aggregations", "--format", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []map[string]any{
		{"aggregation": "sesiones_cliente", "window": "session", "gap_seconds": 1800.0, "key": "cliente_id"},
		{"aggregation": "ventas_hora_pais", "window": "fixed", "size_seconds": 3600.0, "key": "pais"},
		{"aggregation": "ventas_sku_hora_movil", "window": "sliding", "size_seconds": 3600.0, "period_seconds": 900.0, "key": "sku"},
	}
	for i, w := range want {
		maps.Copy(w, map[string]any{"out_of_orderness_seconds": 600.0, "idle_timeout_seconds": 300.0, "early_delay_seconds": 60.0,
			"allowed_lateness_seconds": 7200.0, "late_delay_seconds": 60.0, "accumulation": "ACCUMULATING"})
		for _, k := range []string{"description", "file", "measures", "panes_table", "view"} {
			w[k] = "a value"
			if v, ok := got[min(i, len(got)-1)][k]; ok {
				w[k] = v
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestValidateDecodesAsIngestCSV: validate reads a file as IngestCSV reads
// the object: gzip by its magic bytes whatever the name, a .gz name on
// plain text rejected, a binary file rejected, each with IngestCSV's reason.
func TestValidateDecodesAsIngestCSV(t *testing.T) {
	text, err := os.ReadFile(erpFile)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	tests := []struct {
		name    string
		content []byte
		object  string
		want    string // in the error
	}{
		// The export holds 3 bad rows of 4, found once decompressed.
		{name: "plain text", content: text, object: "exportaciones/2026/03/14/a.csv", want: "3 of 4 rows would be quarantined"},
		{name: "gzip under a .csv name", content: gz.Bytes(), object: "exportaciones/2026/03/14/a.csv", want: "3 of 4 rows would be quarantined"},
		{name: "gzip under a .csv.gz name", content: gz.Bytes(), object: "exportaciones/2026/03/14/a.csv.gz", want: "3 of 4 rows would be quarantined"},
		{name: "a .gz name on plain text", content: text, object: "exportaciones/2026/03/14/a.csv.gz", want: "named .gz but not gzip content"},
		{name: "a binary file", content: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), object: "exportaciones/2026/03/14/a.csv", want: "binary content: NUL byte in the first 8000 bytes"},
		{name: "gzip cut short", content: gz.Bytes()[:gz.Len()/2], object: "exportaciones/2026/03/14/a.csv", want: "would be rejected whole: gzip:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(file, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := dispatch(t.Context(), []string{"validate", file, "--object", tt.object}, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("validate: %v, want %q\n%s", err, tt.want, out.String())
			}
		})
	}
}
