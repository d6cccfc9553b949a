package bqfake

import (
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

const numericMaxText = "99999999999999999999999999999.999999999"

// TestNumericValues checks that a JSON row's NUMERIC is read as BigQuery
// reads it: a decimal string of at most 29 integer and 9 fractional digits.
func TestNumericValues(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // the stored value, as the fake answers it
		wantErr bool
	}{
		{name: "largest", in: `"` + numericMaxText + `"`, want: numericMaxText},
		{name: "smallest", in: `"-` + numericMaxText + `"`, want: "-" + numericMaxText},
		{name: "past 2^64 units", in: `"18446744073.709551617"`, want: "18446744073.709551617"},
		{name: "leading zeros do not count", in: `"000099999999999999999999999999999"`, want: "99999999999999999999999999999"},
		{name: "trailing zeros dropped", in: `"89.900"`, want: "89.9"},
		{name: "thirty integer digits", in: `"100000000000000000000000000000"`, wantErr: true},
		{name: "ten decimals", in: `"0.0000000001"`, wantErr: true},
		{name: "not a number", in: `"1e3"`, wantErr: true},
	}
	schema := []warehouse.Field{{Name: "x", Type: warehouse.Numeric, Mode: "REQUIRED"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row, err := CheckRow(schema, []byte(`{"x":`+tc.in+`}`))
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckRow(%s) error %v, want error %v", tc.in, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, cellText(row["x"])); diff != "" {
				t.Errorf("stored value (-want +got)\n%s", diff)
			}
		})
	}
}

// TestExecutedSelect checks the one SELECT form the fake executes,
// including BigQuery's refusal of a NUMERIC sum past the type's range.
func TestExecutedSelect(t *testing.T) {
	f, err := New(Options{Project: "p", Dataset: "d"})
	if err != nil {
		t.Fatal(err)
	}
	max, _ := new(big.Rat).SetString(numericMaxText)
	tenth, _ := new(big.Rat).SetString("0.1")
	f.tables[warehouse.LineasPedido].rows = []map[string]any{
		{"pedido_id": "B", "importe": tenth, "source_line": int64(3)},
		{"pedido_id": "A", "importe": max, "source_line": int64(2)},
		{"pedido_id": "A", "importe": tenth, "source_line": int64(1)},
		{"pedido_id": "A", "importe": new(big.Rat).Neg(max), "source_line": int64(4)},
	}
	tests := []struct {
		name    string
		sql     string
		want    [][]any
		wantErr string
	}{
		{name: "columns filtered and ordered", sql: "SELECT source_line, importe FROM lineas_pedido WHERE pedido_id = 'A' ORDER BY source_line",
			want: [][]any{{"1", "0.1"}, {"2", numericMaxText}, {"4", "-" + numericMaxText}}},
		{name: "sum within range", sql: "SELECT SUM(importe) FROM lineas_pedido WHERE pedido_id = 'A' AND source_line IN (2, 4)", want: [][]any{{"0"}}},
		{name: "sum of no rows is NULL", sql: "SELECT SUM(importe) FROM lineas_pedido WHERE pedido_id = 'Z'", want: [][]any{{nil}}},
		{name: "sum past NUMERIC overflows", sql: "SELECT SUM(importe) FROM lineas_pedido WHERE pedido_id = 'A' AND source_line IN (1, 2)", wantErr: "numeric overflow"},
		{name: "twice the largest overflows", sql: "SELECT SUM(importe) * 2 FROM lineas_pedido WHERE source_line = 2", wantErr: "numeric overflow"},
		{name: "unknown column", sql: "SELECT nope FROM lineas_pedido WHERE pedido_id = 'A'", wantErr: "Unrecognized name: nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !f.Executes(tc.sql) {
				t.Fatalf("Executes(%q) = false", tc.sql)
			}
			f.mu.Lock()
			res, err := f.selectAnswer(tc.sql, nil)
			f.mu.Unlock()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Rows); diff != "" {
				t.Errorf("rows (-want +got)\n%s", diff)
			}
		})
	}
	for _, sql := range []string{
		"SELECT texto IS NULL FROM opiniones WHERE opinion_id = 'x'",
		"SELECT * FROM ventas_hora_pais WHERE aggregation = 'x'",
		"SELECT SUM(importe), pedido_id FROM lineas_pedido WHERE pedido_id = 'A'",
	} {
		if f.Executes(sql) {
			t.Errorf("Executes(%q) = true, want false (answered as recorded)", sql)
		}
	}
}
