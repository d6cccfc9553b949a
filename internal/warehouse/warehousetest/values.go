package warehousetest

import (
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func testValuesRoundTrip(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/opiniones-1.csv"
	long := strings.Repeat("ñ", 500)
	tests := []struct {
		name  string
		fecha string
		texto *string
		want  []string // texto, texto IS NULL, fecha
	}{
		{"quotes and commas", "2026-03-14", ptr(`Dijo "genial", y volvió`), []string{`Dijo "genial", y volvió`, "false", "2026-03-14"}},
		{"newlines", "2026-02-28", ptr("línea 1\nlínea 2\r\nfin"), []string{"línea 1\nlínea 2\r\nfin", "false", "2026-02-28"}},
		{"empty string is not NULL", "2024-02-29", ptr(""), []string{"", "false", "2024-02-29"}},
		{"NULL", "1969-12-31", nil, []string{"NULL", "true", "1969-12-31"}},
		{"multi-byte runes", "2000-01-01", ptr("Ñandú 🏔️ ß ÿ"), []string{"Ñandú 🏔️ ß ÿ", "false", "2000-01-01"}},
		{"spaces kept", "2026-03-14", ptr("  x  "), []string{"  x  ", "false", "2026-03-14"}},
		{"500 two-byte runes", "2026-03-14", ptr(long), []string{long, "false", "2026-03-14"}},
		{"backslashes", "2026-03-14", ptr(`C:\ruta\"x"\n`), []string{`C:\ruta\"x"\n`, "false", "2026-03-14"}},
		{"NUL byte", "2026-03-14", ptr("a\x00b"), []string{"a\x00b", "false", "2026-03-14"}},
	}
	var rows [][]warehouse.Value
	for i, tc := range tests {
		texto := warehouse.NullValue()
		if tc.texto != nil {
			texto = warehouse.StringValue(*tc.texto)
		}
		rows = append(rows, rowOf(t, warehouse.Opiniones, map[string]warehouse.Value{
			"opinion_id":        warehouse.StringValue(tag + "-" + string(rune('a'+i))),
			"sku":               warehouse.StringValue(tag + "-MOCH"),
			"fecha":             warehouse.DateValue(day(t, tc.fecha)),
			"puntuacion":        warehouse.IntValue(int64(1 + i%5)),
			"texto":             texto,
			"pais":              warehouse.StringValue("ES"),
			"source_object":     warehouse.StringValue(obj),
			"source_generation": warehouse.IntValue(1712345678901234),
			"source_line":       warehouse.IntValue(int64(i + 2)),
			"ingested_at":       warehouse.TimeValue(ingestedAt),
		}))
	}
	if _, err := w.Load(t.Context(), warehouse.Load{ID: tag + "-op", Table: warehouse.Opiniones, Rows: rowsOf(rows)}); err != nil {
		t.Fatalf("Load: %v", err)
	}
	var want [][]string
	for _, tc := range tests {
		want = append(want, append(tc.want, "1712345678901234", "2026-03-15T02:00:00.123456Z"))
	}
	check(t, w, "SELECT texto, texto IS NULL, fecha, source_generation, ingested_at FROM opiniones"+
		" WHERE opinion_id LIKE '"+tag+"-%' ORDER BY source_line", want)
}

func ptr(s string) *string { return &s }

func testNumericExact(t *testing.T, w Warehouse, tag string) {
	obj := "gs://landing/" + tag + "/pedidos.csv"
	tests := []struct {
		name     string
		precio   string
		cantidad int64
		want     []string // precio_unitario, importe
	}{
		{"a tenth", "0.1", 1, []string{"0.1", "0.1"}},
		{"two tenths", "0.2", 1, []string{"0.2", "0.2"}},
		{"nine decimals", "123456789.123456789", 1, []string{"123456789.123456789", "123456789.123456789"}},
		{"smallest step", "0.000000001", 3, []string{"0.000000001", "0.000000003"}},
		{"negative", "-0.000000001", 1, []string{"-0.000000001", "-0.000000001"}},
		{"largest numeric.Dec", "9223372036.854775807", 1, []string{"9223372036.854775807", "9223372036.854775807"}},
		{"zero", "0", 4, []string{"0", "0"}},
		{"trailing zeros", "89.900", 2, []string{"89.9", "179.8"}},
		{"units past 64 bits", "12345678901234567890.123456789", 1, []string{"12345678901234567890.123456789", "12345678901234567890.123456789"}},
		{"NUMERIC's largest", "99999999999999999999999999999.999999999", 1, []string{"99999999999999999999999999999.999999999", "99999999999999999999999999999.999999999"}},
		{"NUMERIC's smallest", "-99999999999999999999999999999.999999999", 1, []string{"-99999999999999999999999999999.999999999", "-99999999999999999999999999999.999999999"}},
	}
	var ls []line
	for i, tc := range tests {
		ls = append(ls, line{pedido: tag + "-P", linea: int64(i + 1), fecha: "2026-03-14", sku: tag + "-X", cantidad: tc.cantidad,
			precio: tc.precio, pais: "ES", object: obj, gen: 1, srcLine: int64(i + 2)})
	}
	if _, err := w.Load(t.Context(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: rowsOf(lines(t, ls...))}); err != nil {
		t.Fatalf("Load: %v", err)
	}
	var want [][]string
	for _, tc := range tests {
		want = append(want, tc.want)
	}
	check(t, w, "SELECT precio_unitario, importe FROM lineas_pedido WHERE pedido_id = '"+tag+"-P'"+
		" ORDER BY source_line", want)
	sums := []struct {
		name  string
		lines string
		want  string
	}{
		{"0.1 + 0.2 is 0.3", "2, 3", "0.3"},
		{"sums beyond the old int64 range stay exact", "4, 7, 9", "9346829005.778232596"},
		{"NUMERIC's bounds cancel", "11, 12", "0"},
	}
	for _, s := range sums {
		t.Run(s.name, func(t *testing.T) {
			check(t, w, "SELECT SUM(importe) FROM lineas_pedido WHERE pedido_id = '"+tag+"-P' AND source_line IN ("+s.lines+")", [][]string{{s.want}})
		})
	}
	t.Run("twice the old int64 largest", func(t *testing.T) {
		check(t, w, "SELECT SUM(importe) * 2 FROM lineas_pedido WHERE pedido_id = '"+tag+"-P' AND source_line = 7", [][]string{{"18446744073.709551614"}})
	})
}
