package bigquery

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestEncodeGolden pins the exact bytes of a staged load file. Every line
// must also pass the fake's BigQuery checks for the table.
func TestEncodeGolden(t *testing.T) {
	tests := []struct {
		name   string
		table  string
		rows   [][]warehouse.Value
		golden string
	}{
		{name: "order lines", table: warehouse.LineasPedido, rows: lineas(t, 3), golden: "lineas_pedido.ndjson"},
		{
			name:  "dead letters: NULLs, escapes, extreme values",
			table: warehouse.PedidosDescartados,
			rows: [][]warehouse.Value{{
				warehouse.NullValue(), warehouse.NullValue(), warehouse.StringValue("invalid: importe_total \"12,5\" is not a number"),
				warehouse.NullValue(), warehouse.NullValue(), warehouse.NullValue(), warehouse.TimeValue(time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)),
				warehouse.StringValue("1234567890"), warehouse.StringValue("{\"pedido_id\":\"P-1\"}\n\tattr=\x01\\ año \xff"),
			}, {
				warehouse.StringValue("P-9"), warehouse.StringValue("ventas_hora_pais"), warehouse.StringValue("too_late"),
				warehouse.TimeValue(time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.FixedZone("CET", 3600))),
				warehouse.TimeValue(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)), warehouse.TimeValue(time.Date(2026, 3, 14, 11, 0, 0, 1000, time.UTC)),
				warehouse.TimeValue(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)), warehouse.NullValue(), warehouse.StringValue(""),
			}},
			golden: "pedidos_descartados.ndjson",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := mustTable(t, tc.table)
			enc := newRowEncoder(tb)
			var got []byte
			var err error
			for _, row := range tc.rows {
				if got, err = enc.appendRow(got, row); err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
			}
			for i, line := range bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n")) {
				if _, err := bqfake.CheckRow(tb.Schema, line); err != nil {
					t.Errorf("line %d rejected by the fake: %v\n%s", i+1, err, line)
				}
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

func TestAppendValue(t *testing.T) {
	tests := []struct {
		name    string
		typ     warehouse.Type
		v       warehouse.Value
		want    string
		wantErr string
	}{
		{name: "int as number", typ: warehouse.Int64, v: warehouse.IntValue(-42), want: `-42`},
		{name: "largest exact double", typ: warehouse.Int64, v: warehouse.IntValue(1<<53 - 1), want: `9007199254740991`},
		{name: "int beyond 2^53 as string", typ: warehouse.Int64, v: warehouse.IntValue(1 << 53), want: `"9007199254740992"`},
		{name: "min int64 as string", typ: warehouse.Int64, v: warehouse.IntValue(math.MinInt64), want: `"-9223372036854775808"`},
		{name: "numeric as shortest exact string", typ: warehouse.Numeric, v: warehouse.DecValue(dec(t, "89.900")), want: `"89.9"`},
		{name: "numeric nine decimals", typ: warehouse.Numeric, v: warehouse.DecValue(dec(t, "-0.000000001")), want: `"-0.000000001"`},
		{name: "date", typ: warehouse.Date, v: warehouse.DateValue(day(t, "2026-02-28")), want: `"2026-02-28"`},
		{name: "date before 1970", typ: warehouse.Date, v: warehouse.DateValue(day(t, "1969-12-31")), want: `"1969-12-31"`},
		{name: "timestamp truncated to microseconds, in UTC", typ: warehouse.Timestamp,
			v: warehouse.Value{Time: time.Date(2026, 3, 14, 10, 0, 0, 999999999, time.FixedZone("CET", 3600))}, want: `"2026-03-14T09:00:00.999999Z"`},
		{name: "timestamp out of range", typ: warehouse.Timestamp, v: warehouse.Value{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, wantErr: "outside BigQuery's range"},
		{name: "zero timestamp is year 1, in range", typ: warehouse.Timestamp, v: warehouse.Value{}, want: `"0001-01-01T00:00:00.000000Z"`},
		{name: "unknown type", typ: "BOOL", v: warehouse.Value{}, wantErr: "unsupported column type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendValue(nil, tc.typ, &tc.v) // nil on an error
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ name, in, want string }{ // want: what encoding/json decodes it back to
		{"plain", "SKU-ABC", "SKU-ABC"},
		{"quotes and backslash", `di "hola" \ adiós`, `di "hola" \ adiós`},
		{"control characters", "a\nb\rc\td\x00e\x1f", "a\nb\rc\td\x00e\x1f"},
		{"multi-byte runes", "ñ€😀", "ñ€😀"},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb\xc3", "a\ufffdb\ufffd"},
		{"HTML is left alone", "<a>&", "<a>&"},
		{"line separators", "\u2028\u2029", "\u2028\u2029"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := warehouse.AppendJSONString(nil, tc.in)
			if fast := appendString(nil, tc.in); string(fast) != string(b) {
				t.Errorf("appendString = %s, AppendJSONString = %s", fast, b)
			}
			if !json.Valid(b) {
				t.Fatalf("invalid JSON: %s", b)
			}
			var got string
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppendStringShortcut puts every byte value at every position of
// strings long enough for the word-at-a-time test and its tail: the
// shortcut must never take a byte that needs escaping.
func TestAppendStringShortcut(t *testing.T) {
	base := []byte("SKU-ABC-123-XYZ-9")
	for pos := range base {
		for c := range 256 {
			in := bytes.Clone(base)
			in[pos] = byte(c)
			want := warehouse.AppendJSONString(nil, string(in))
			if got := appendString(nil, string(in)); string(got) != string(want) {
				t.Fatalf("byte %#x at %d: got %s, want %s", c, pos, got, want)
			}
		}
	}
}

// BenchmarkEncodeLineas measures staging's encoding cost per order line
// (the upload itself is the network's).
func BenchmarkEncodeLineas(b *testing.B) {
	rows := lineas(b, 1000) // order, SKU, quantity and price change from row to row, as in an export
	for i, r := range rows {
		r[0] = warehouse.StringValue(fmt.Sprintf("P-%07d", 1000000+i/3))
		r[3] = warehouse.StringValue(fmt.Sprintf("SKU-%03d", i%211))
		r[4] = warehouse.IntValue(int64(1 + i%5))
		r[5] = warehouse.DecValue(dec(b, fmt.Sprintf("%d.%02d", 5+i%200, i%100)))
	}
	enc := newRowEncoder(mustTable(b, warehouse.LineasPedido))
	var buf []byte
	var err error
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		buf, err = enc.appendRow(buf[:0], rows[n%len(rows)])
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}
