package contract

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// Headers in any order, case and spacing, an optional column absent and a
// required one missing: TestGolden (reordered_header.csv, missing_column.csv).
func TestBind(t *testing.T) {
	orderHeader := []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "cliente_id", "pais"}
	orderRow := []string{"P", "1", "2026-03-14", "s", "2", "1,5", "C", "ES"}
	orderOut := []string{"P", "1", "2026-03-14", "S", "2", "1.5", "C", "ES", "3"}
	reviewRow, reviewOut := []string{"O", "s", "2026-03-14", "4", "pt"}, []string{"O", "S", "2026-03-14", "4", "NULL", "PT"}
	tests := []struct {
		name    string
		feed    string
		header  []string
		want    string   // FileError reason; "" when the header binds
		row     []string // with want == "": a row in this header's layout
		wantOut []string // the row's values, rendered
	}{
		{name: "declared order", feed: "lineas_pedido", header: orderHeader, row: orderRow, wantOut: orderOut},
		{name: "unknown columns ignored, even twice or unnamed", feed: "lineas_pedido",
			header: append(append([]string{"notas"}, orderHeader...), "notas", ""),
			row:    append(append([]string{"x"}, orderRow...), "y", "z"), wantOut: orderOut},
		{name: "reviews without text", feed: "opiniones", header: []string{"opinion_id", "sku", "fecha", "puntuacion", "pais"},
			row: reviewRow, wantOut: reviewOut},
		{name: "byte order mark left on a quoted name", feed: "opiniones", header: []string{"\ufeffopinion_id", "sku", "fecha", "puntuacion", "pais"},
			row: reviewRow, wantOut: reviewOut},
		{name: "several missing", feed: "lineas_pedido", header: []string{"pedido_id", "linea", "fecha", "sku", "precio_unitario"}, want: "missing required columns cantidad, pais"},
		{name: "declared column twice", feed: "lineas_pedido", header: []string{"pedido_id", "linea", "fecha", "sku", "SKU", "cantidad", "precio_unitario", "cliente_id", "pais"}, want: "duplicate column sku"},
		{name: "header not utf-8", feed: "lineas_pedido", header: []string{"pedido_id", "l\xednea"}, want: "header column 2 is not valid UTF-8"},
		{name: "a data row as header", feed: "lineas_pedido", header: []string{"P-1", "1", "2026-03-14", "S", "2", "89,90", "C", "ES"}, want: "missing required columns pedido_id, linea, fecha, sku, cantidad, precio_unitario, pais"},
		{name: "binary header", feed: "opiniones", header: []string{"\x00\x01\x02"}, want: "header column 1 holds a NUL byte"},
		{name: "empty header", feed: "opiniones", header: []string{""}, want: "missing required columns opinion_id, sku, fecha, puntuacion, pais"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := feed(t, tt.feed)
			b, err := f.Bind(bytesOf(tt.header...))
			if tt.want != "" {
				var fe *FileError
				if !errors.As(err, &fe) {
					t.Fatalf("Bind error = %v, want a *FileError", err)
				}
				if fe.Reason != tt.want || fe.Error() != tt.want {
					t.Errorf("reason = %q, want %q", fe.Reason, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Columns() != len(tt.header) {
				t.Errorf("Columns() = %d, want %d", b.Columns(), len(tt.header))
			}
			out := make([]schema.Value, f.Width())
			if r := b.Validate(bytesOf(tt.row...), out); !r.OK() {
				t.Fatalf("row rejected: %+v", r)
			}
			if diff := cmp.Diff(tt.wantOut, render(f, out)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindWindows1252Header(t *testing.T) {
	f := sinkFeed(t)
	if _, err := f.Bind(bytesOf("code", "nombre\x81")); err == nil || err.Error() != "header column 2 is not valid windows-1252 text" {
		t.Errorf("Bind error = %v", err)
	}
	b, err := f.Bind(bytesOf("CODE", "Nombre", "a\xf1o"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]schema.Value, f.Width())
	r := b.Validate(bytesOf("ab-1", "x", "\x81"), out)
	if diff := cmp.Diff(Reject{"invalid_windows1252", `column 3 (año): byte undefined in windows-1252 "\x81"`}, r); diff != "" {
		t.Errorf("reject (-want +got):\n%s", diff)
	}
}

// render turns values into text for comparisons: NULL, or the value as the
// column's type writes it.
func render(f *Feed, vals []schema.Value) []string {
	sch := f.Schema()
	out := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case v.Null:
			out[i] = "NULL"
		case sch[i].Type == schema.String:
			out[i] = v.Str
		case sch[i].Type == schema.Int64:
			out[i] = strconv.FormatInt(v.Int, 10)
		case sch[i].Type == schema.Numeric:
			out[i] = v.Dec.String()
		case sch[i].Type == schema.Date:
			out[i] = schema.FormatDate(v.Days)
		}
	}
	return out
}
