package stream

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

func TestElementsOf(t *testing.T) {
	dec := func(v string) numeric.Dec {
		d, err := numeric.Parse(v, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	et := time.Date(2026, 3, 14, 17, 40, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	hour := func(start time.Time) window.Window { return window.Window{Start: start, End: start.Add(time.Hour)} }
	spec := func(key string, period time.Duration) window.Spec {
		s := window.Defaults()
		s.KeyField, s.Period = key, period
		return s
	}
	fixed, sliding := spec("pais", 0), spec("pais", 15*time.Minute)
	fixedSKU, bySKU, byClient := spec(KeySKU, 0), spec(KeySKU, 15*time.Minute), spec("cliente_id", 0)
	o := order.Order{PedidoID: "P-1", ClienteID: "C-9", Pais: "ES", EventTime: et, ImporteTotal: dec("200.00"),
		Lineas: []order.Line{
			{SKU: " moch-40l-az ", Cantidad: 2, PrecioUnitario: dec("89.90")},
			{SKU: "", Cantidad: 1, PrecioUnitario: dec("5")},
			{SKU: "GORRA", Cantidad: 3, PrecioUnitario: dec("0.10")},
			{SKU: "MOCH-40L-AZ", Cantidad: 1, PrecioUnitario: dec("10.00")},
			{SKU: "  ", Cantidad: 1, PrecioUnitario: dec("5")},
		}}
	orderMs := window.Measures{Importe: dec("200.00"), Pedidos: 1, Unidades: 8}
	moch := window.Measures{Importe: dec("189.80"), Pedidos: 1, Unidades: 3}
	gorra := window.Measures{Importe: dec("0.30"), Pedidos: 1, Unidades: 3}
	el := func(w window.Window, key string, ms window.Measures) element {
		return element{wk: window.WindowKey{Window: w, Key: key}, ms: ms}
	}
	tests := []struct {
		name        string
		spec        window.Spec
		o           order.Order
		want        []element
		wantMissing []int
		wantErr     bool
	}{
		{name: "fixed, by country: one element, the order's measures", spec: fixed, o: o,
			want: []element{el(hour(at(17, 0)), "ES", orderMs)}},
		{name: "fixed, by customer", spec: byClient, o: o,
			want: []element{el(hour(at(17, 0)), "C-9", orderMs)}},
		{name: "sliding, by country: one element per window, ascending", spec: sliding, o: o,
			want: []element{
				el(hour(at(16, 45)), "ES", orderMs), el(hour(at(17, 0)), "ES", orderMs),
				el(hour(at(17, 15)), "ES", orderMs), el(hour(at(17, 30)), "ES", orderMs),
			}},
		{name: "fixed, by SKU: lines of one SKU sum, count once; lines without a SKU are missing", spec: fixedSKU, o: o,
			want:        []element{el(hour(at(17, 0)), "GORRA", gorra), el(hour(at(17, 0)), "MOCH-40L-AZ", moch)},
			wantMissing: []int{1, 4}},
		{name: "sliding, by SKU: per SKU and window", spec: bySKU, o: o,
			want: []element{
				el(hour(at(16, 45)), "GORRA", gorra), el(hour(at(17, 0)), "GORRA", gorra),
				el(hour(at(17, 15)), "GORRA", gorra), el(hour(at(17, 30)), "GORRA", gorra),
				el(hour(at(16, 45)), "MOCH-40L-AZ", moch), el(hour(at(17, 0)), "MOCH-40L-AZ", moch),
				el(hour(at(17, 15)), "MOCH-40L-AZ", moch), el(hour(at(17, 30)), "MOCH-40L-AZ", moch),
			},
			wantMissing: []int{1, 4}},
		{name: "by SKU, no line has one: no element", spec: fixedSKU,
			o:           order.Order{PedidoID: "P-2", EventTime: et, Lineas: []order.Line{{Cantidad: 1, PrecioUnitario: dec("1")}}},
			wantMissing: []int{0}},
		{name: "by SKU, no lines", spec: fixedSKU, o: order.Order{PedidoID: "P-3", EventTime: et}},
		{name: "by SKU, an amount out of range is an error", spec: fixedSKU,
			o:       order.Order{PedidoID: "P-4", EventTime: et, Lineas: []order.Line{{SKU: "X", Cantidad: 1 << 40, PrecioUnitario: dec("99999999999999999999")}}},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing, err := elementsOf(tt.spec, tt.o, orderMs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %t", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(element{})); diff != "" {
				t.Errorf("elements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMissing, missing); diff != "" {
				t.Errorf("lines without a SKU (-want +got):\n%s", diff)
			}
		})
	}
}
