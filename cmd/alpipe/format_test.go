package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestJSONStyle: one style for every --format json. tick used to print Go
// field names and nanoseconds ("Lag": 600000000000).
func TestJSONStyle(t *testing.T) {
	type inner struct {
		Importe numeric.Dec
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "tick result: snake_case, RFC 3339, seconds",
			in: stream.TickResult{
				Now:          time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC),
				Aggregations: []stream.AggregationTick{{Aggregation: "ventas_hora_pais", Lag: 10 * time.Minute, OpenWindows: 3}},
			},
			want: `"now": "2026-03-14T18:30:00Z"|"aggregation": "ventas_hora_pais"|"lag_seconds": 600|"open_windows": 3|"watermark_before": null|"dead_letters_pending": 0`,
		},
		{
			name: "NUMERIC is an exact string",
			in:   inner{Importe: numeric.FromNanos(8990000000)},
			want: `"importe": "8.99"`,
		},
		{
			name: "field order is declaration order",
			in:   struct{ Zeta, Alpha int }{1, 2},
			want: "{\n  \"zeta\": 1,\n  \"alpha\": 2\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printJSON(&out, tt.in); err != nil {
				t.Fatal(err)
			}
			for _, w := range strings.Split(tt.want, "|") {
				if !strings.Contains(out.String(), w) {
					t.Errorf("JSON lacks %s:\n%s", w, out.String())
				}
			}
			for _, bad := range []string{`"Lag"`, `"Now"`, "600000000000"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("JSON has %s:\n%s", bad, out.String())
				}
			}
		})
	}
}

func TestSnake(t *testing.T) {
	got := []string{}
	for _, s := range []string{"PedidoID", "WatermarkBefore", "CRC32C", "MD5", "DeadLettersPending", "Lag", "MessageID", "HTTPStatus"} {
		got = append(got, snake(s))
	}
	want := []string{"pedido_id", "watermark_before", "crc32c", "md5", "dead_letters_pending", "lag", "message_id", "http_status"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snake (-want +got):\n%s", diff)
	}
}

// TestQueryOutput: text tables right-align numbers with separators and
// money with two decimals; JSON keeps the column order, numbers as numbers
// and NUMERIC as exact strings.
func TestQueryOutput(t *testing.T) {
	res := warehouse.Result{
		Columns: []string{"sku", "unidades", "importe"},
		Rows:    [][]string{{"MOCH-40L-AZ", "1800015", "89.9"}, {"GORRO", "7", "1234567.125"}, {"X", "NULL", "NULL"}},
	}
	kinds := describeKinds(warehouse.Result{Columns: []string{"column_name", "column_type"}, Rows: [][]string{{"sku", "VARCHAR"}, {"unidades", "BIGINT"}, {"importe", "DECIMAL(18,2)"}}})
	tests := []struct {
		name, format, want string
	}{
		{name: "table", format: "table", want: "" +
			"sku           unidades        importe\n" +
			"MOCH-40L-AZ  1,800,015          89.90\n" +
			"GORRO                7  1,234,567.125\n" +
			"X                 NULL           NULL\n"},
		{name: "json", format: "json", want: `[
  {
    "sku": "MOCH-40L-AZ",
    "unidades": 1800015,
    "importe": "89.9"
  },
  {
    "sku": "GORRO",
    "unidades": 7,
    "importe": "1234567.125"
  },
  {
    "sku": "X",
    "unidades": null,
    "importe": null
  }
]
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := writeResult(&out, res, kinds, tt.format); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestContractsAndValidate(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"contracts"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lineas_pedido:", "opiniones:", "precio_unitario", "NUMERIC", "table:   lineas_pedido"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("contracts lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	err := dispatch(t.Context(), []string{"validate", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv", "--format", "json"}, &out)
	if err == nil || !strings.Contains(err.Error(), "rows would be quarantined") {
		t.Errorf("validate of the dirty ERP file: error %v, want the rows it would quarantine", err)
	}
	for _, want := range []string{`"feed": "lineas_pedido"`, `"rows_read": `, `"rows_rejected": `, `"examples": [`, `"line": `} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("validate JSON lacks %q:\n%s", want, out.String())
		}
	}
}

// TestTextNumbers: quantities get separators, money two decimals, and
// identifiers (generations, line numbers) stay as written.
func TestTextNumbers(t *testing.T) {
	kinds := describeKinds(warehouse.Result{Columns: []string{"column_name", "column_type"},
		Rows: [][]string{{"source_generation", "BIGINT"}, {"source_line", "BIGINT"}, {"cantidad", "BIGINT"}}})
	got := []string{cell("1796130640498135", kinds[0]), cell("1234", kinds[1]), cell("1234", kinds[2]),
		paneLine(window.Pane{Key: "fr", Measures: window.Measures{Importe: numeric.FromNanos(65400000000), Pedidos: 2, Unidades: 1500}})}
	want := []string{"1796130640498135", "1234", "1,234",
		"pane FR -inf--inf #0         importe=65.40 pedidos=2 unidades=1,500"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
