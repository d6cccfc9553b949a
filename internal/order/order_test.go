package order

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
)

func dec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

func countries(c string) bool { return c == "ES" || c == "FR" || c == "PT" }

func TestParse(t *testing.T) {
	const seed = `{"pedido_id":"P-000123","cliente_id":"C-88","pais":"ES","importe_total":"179.80","lineas":[{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"}]}`
	at := map[string]string{EventTimeAttribute: "2026-03-14T18:42:00+01:00"}
	tests := []struct {
		name    string
		data    string
		attrs   map[string]string
		noClock bool // Parse, without Rules' processing time
		want    Order
		wantErr string
	}{
		{
			name:  "seed order",
			data:  seed,
			attrs: at,
			want: Order{PedidoID: "P-000123", ClienteID: "C-88", Pais: "ES", ImporteTotal: dec("179.80"),
				Lineas:    []Line{{SKU: "MOCH-40L-AZ", Cantidad: 2, PrecioUnitario: dec("89.90")}},
				EventTime: time.Date(2026, 3, 14, 17, 42, 0, 0, time.UTC)},
		},
		{
			name:  "amount as bare JSON number is read exactly",
			data:  `{"pedido_id":"P-1","pais":"fr","importe_total":0.1,"lineas":[]}`,
			attrs: at,
			want:  Order{PedidoID: "P-1", Pais: "FR", ImporteTotal: dec("0.1"), Lineas: []Line{}, EventTime: time.Date(2026, 3, 14, 17, 42, 0, 0, time.UTC)},
		},
		{name: "missing event time", data: seed, attrs: map[string]string{}, wantErr: "invalid: missing attribute momento_evento"},
		{name: "bad event time", data: seed, attrs: map[string]string{EventTimeAttribute: "ayer"}, wantErr: `invalid: momento_evento "ayer" is not RFC 3339`},
		{name: "bad JSON", data: `{"pedido_id":`, attrs: at, wantErr: "invalid: body is not an order: unexpected EOF"},
		{name: "missing pedido_id", data: `{"pais":"ES","importe_total":"1"}`, attrs: at, wantErr: "invalid: missing pedido_id"},
		{name: "non-decimal amount", data: `{"pedido_id":"P","pais":"ES","importe_total":"1,5e3"}`, attrs: at, wantErr: `invalid: importe_total "1,5e3" is not a decimal number`},
		{name: "too precise price", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"1"},{"sku":"B","cantidad":1,"precio_unitario":"0.0000000001"}]}`, attrs: at,
			wantErr: `invalid: lineas[1].precio_unitario "0.0000000001" has more than 9 decimal places`},
		{name: "quantity of the wrong type", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1},{"sku":"B","cantidad":"dos"}]}`, attrs: at,
			wantErr: `invalid: lineas[1].cantidad "dos" is not a whole number`},
		{name: "country of the wrong type", data: `{"pedido_id":"P","pais":34,"importe_total":"1"}`, attrs: at, wantErr: `invalid: pais 34 is not a string`},
		{name: "lines not an array", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":"x"}`, attrs: at,
			wantErr: `invalid: body is not an order: lineas is a JSON string, where an array belongs`},
		{name: "amount past the old int64 range", data: `{"pedido_id":"P","pais":"ES","importe_total":"9000000000","lineas":[]}`, attrs: at,
			want: Order{PedidoID: "P", Pais: "ES", ImporteTotal: dec("9000000000"), Lineas: []Line{}, EventTime: time.Date(2026, 3, 14, 17, 42, 0, 0, time.UTC)}},
		{name: "amount at NUMERIC's bound", data: `{"pedido_id":"P","pais":"ES","importe_total":"99999999999999999999999999999.999999999","lineas":[]}`, attrs: at,
			want: Order{PedidoID: "P", Pais: "ES", ImporteTotal: numeric.Max(), Lineas: []Line{}, EventTime: time.Date(2026, 3, 14, 17, 42, 0, 0, time.UTC)}},
		{name: "amount outside NUMERIC", data: `{"pedido_id":"P","pais":"ES","importe_total":"100000000000000000000000000000"}`, attrs: at,
			wantErr: `invalid: importe_total "100000000000000000000000000000" is outside NUMERIC's range of ±99999999999999999999999999999.999999999`},
		{name: "price outside NUMERIC", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":-100000000000000000000000000000}]}`, attrs: at,
			wantErr: `invalid: lineas[0].precio_unitario -100000000000000000000000000000 is outside NUMERIC's range of ±99999999999999999999999999999.999999999`},
		{name: "negative amount", data: `{"pedido_id":"P","pais":"ES","importe_total":"-1"}`, attrs: at, wantErr: "invalid: importe_total -1 is negative"},
		{name: "bad country", data: `{"pedido_id":"P","pais":"XX","importe_total":"1"}`, attrs: at, wantErr: `invalid: pais "XX" is not an ISO 3166-1 alpha-2 code`},
		{name: "zero quantity", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":0,"precio_unitario":"1"}]}`, attrs: at, wantErr: "invalid: lineas[0].cantidad 0 must be > 0"},
		{name: "unknown field", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","extra":1}`, attrs: at, wantErr: `invalid: body is not an order: unknown field "extra"`},
		{name: "trailing data", data: seed + `{}`, attrs: at, wantErr: "invalid: body has data after the order object"},
		{name: "event time before 1900", data: seed, attrs: map[string]string{EventTimeAttribute: "1899-12-31T23:59:59Z"},
			wantErr: "invalid: momento_evento 1899-12-31T23:59:59Z is outside the years 1900 to 8999"},
		{name: "event time in year 9000", data: seed, attrs: map[string]string{EventTimeAttribute: "9000-01-01T00:00:00Z"},
			wantErr: "invalid: momento_evento 9000-01-01T00:00:00Z is outside the years 1900 to 8999"},
		{name: "far future event time", data: seed, attrs: map[string]string{EventTimeAttribute: "2300-01-01T00:00:00Z"},
			wantErr: "invalid: momento_evento 2300-01-01T00:00:00Z is more than 24h0m0s ahead of processing time 2026-03-14T17:45:00Z"},
		{name: "event time just inside the skew", data: seed, attrs: map[string]string{EventTimeAttribute: "2026-03-15T17:45:00Z"},
			want: Order{PedidoID: "P-000123", ClienteID: "C-88", Pais: "ES", ImporteTotal: dec("179.80"),
				Lineas:    []Line{{SKU: "MOCH-40L-AZ", Cantidad: 2, PrecioUnitario: dec("89.90")}},
				EventTime: time.Date(2026, 3, 15, 17, 45, 0, 0, time.UTC)}},
		{name: "event time a nanosecond beyond the skew", data: seed, attrs: map[string]string{EventTimeAttribute: "2026-03-15T17:45:00.000000001Z"},
			wantErr: "invalid: momento_evento 2026-03-15T17:45:00.000000001Z is more than 24h0m0s ahead of processing time 2026-03-14T17:45:00Z"},
		{name: "without a clock, no skew check", data: `{"pedido_id":"P-1","pais":"ES","importe_total":"1"}`, noClock: true,
			attrs: map[string]string{EventTimeAttribute: "2300-01-01T00:00:00Z"},
			want:  Order{PedidoID: "P-1", Pais: "ES", ImporteTotal: dec("1"), EventTime: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "pedido_id too long", data: `{"pedido_id":"` + strings.Repeat("P", MaxPedidoIDBytes+1) + `","pais":"ES","importe_total":"1"}`, attrs: at,
			wantErr: "invalid: pedido_id longer than 256 bytes"},
		{name: "cliente_id too long", data: `{"pedido_id":"P","cliente_id":"` + strings.Repeat("C", MaxClienteIDBytes+1) + `","pais":"ES","importe_total":"1"}`, attrs: at,
			wantErr: "invalid: cliente_id longer than 256 bytes"},
		{name: "sku too long", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"1"},{"sku":"` + strings.Repeat("S", MaxSKUBytes+1) + `","cantidad":1,"precio_unitario":"1"}]}`, attrs: at,
			wantErr: "invalid: lineas[1].sku longer than 256 bytes"},
	}
	rules := Rules{IsCountry: countries, Now: time.Date(2026, 3, 14, 17, 45, 0, 0, time.UTC), MaxClockSkew: DefaultMaxClockSkew}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.Parse([]byte(tt.data), tt.attrs)
			if tt.noClock {
				got, err = Parse([]byte(tt.data), tt.attrs, countries)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
				}
				if _, ok := err.(*Invalid); !ok {
					t.Fatalf("error %T is not *Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
