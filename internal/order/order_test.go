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
	at := time.Date(2026, 3, 14, 17, 42, 0, 0, time.UTC) // the attribute unless attrs says otherwise
	body := func(id string) string {
		return `{"pedido_id":"` + id + `","pais":"ES","importe_total":"10.00"}`
	}
	seedOrder := Order{PedidoID: "P-000123", ClienteID: "C-88", Pais: "ES", ImporteTotal: dec("179.80"),
		Lineas: []Line{{SKU: "MOCH-40L-AZ", Cantidad: 2, PrecioUnitario: dec("89.90")}}, EventTime: at}
	seedAt := func(t time.Time) Order { o := seedOrder; o.EventTime = t; return o }
	valid := func(id string) Order {
		return Order{PedidoID: id, Pais: "ES", ImporteTotal: dec("10.00"), EventTime: at}
	}
	tests := []struct {
		name    string
		data    string
		attrs   map[string]string
		noClock bool // Parse, without Rules' processing time
		want    Order
		wantErr string
	}{
		{name: "seed order", data: seed, want: seedOrder},
		{name: "amount as bare JSON number is read exactly", data: `{"pedido_id":"P-1","pais":"fr","importe_total":0.1,"lineas":[]}`,
			want: Order{PedidoID: "P-1", Pais: "FR", ImporteTotal: dec("0.1"), Lineas: []Line{}, EventTime: at}},
		{name: "missing event time", data: seed, attrs: map[string]string{}, wantErr: "invalid: missing attribute momento_evento"},
		{name: "bad event time", data: seed, attrs: map[string]string{EventTimeAttribute: "ayer"}, wantErr: `invalid: momento_evento "ayer" is not RFC 3339`},
		{name: "bad JSON", data: `{"pedido_id":`, wantErr: "invalid: body is not an order: unexpected EOF"},
		{name: "missing pedido_id", data: `{"pais":"ES","importe_total":"1"}`, wantErr: "invalid: missing pedido_id"},
		{name: "non-decimal amount", data: `{"pedido_id":"P","pais":"ES","importe_total":"1,5e3"}`, wantErr: `invalid: importe_total "1,5e3" is not a decimal number`},
		{name: "too precise price", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"1"},{"sku":"B","cantidad":1,"precio_unitario":"0.0000000001"}]}`,
			wantErr: `invalid: lineas[1].precio_unitario "0.0000000001" has more than 9 decimal places`},
		{name: "quantity of the wrong type", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1},{"sku":"B","cantidad":"dos"}]}`,
			wantErr: `invalid: lineas[1].cantidad "dos" is not a whole number`},
		{name: "country of the wrong type", data: `{"pedido_id":"P","pais":34,"importe_total":"1"}`, wantErr: `invalid: pais 34 is not a string`},
		{name: "lines not an array", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":"x"}`,
			wantErr: `invalid: body is not an order: lineas is a JSON string, where an array belongs`},
		{name: "amount past the old int64 range", data: `{"pedido_id":"P","pais":"ES","importe_total":"9000000000","lineas":[]}`,
			want: Order{PedidoID: "P", Pais: "ES", ImporteTotal: dec("9000000000"), Lineas: []Line{}, EventTime: at}},
		{name: "amount at NUMERIC's bound", data: `{"pedido_id":"P","pais":"ES","importe_total":"99999999999999999999999999999.999999999","lineas":[]}`,
			want: Order{PedidoID: "P", Pais: "ES", ImporteTotal: numeric.Max(), Lineas: []Line{}, EventTime: at}},
		{name: "amount outside NUMERIC", data: `{"pedido_id":"P","pais":"ES","importe_total":"100000000000000000000000000000"}`,
			wantErr: `invalid: importe_total "100000000000000000000000000000" is outside NUMERIC's range of ±99999999999999999999999999999.999999999`},
		{name: "price outside NUMERIC", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":-100000000000000000000000000000}]}`,
			wantErr: `invalid: lineas[0].precio_unitario -100000000000000000000000000000 is outside NUMERIC's range of ±99999999999999999999999999999.999999999`},
		{name: "negative amount", data: `{"pedido_id":"P","pais":"ES","importe_total":"-1"}`, wantErr: "invalid: importe_total -1 is negative"},
		{name: "bad country", data: `{"pedido_id":"P","pais":"XX","importe_total":"1"}`, wantErr: `invalid: pais "XX" is not an ISO 3166-1 alpha-2 code`},
		{name: "zero quantity", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":0,"precio_unitario":"1"}]}`, wantErr: "invalid: lineas[0].cantidad 0 must be > 0"},
		{name: "unknown field", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","extra":1}`, wantErr: `invalid: body is not an order: unknown field "extra"`},
		{name: "trailing data", data: seed + `{}`, wantErr: "invalid: body has data after the order object"},
		{name: "event time before 1900", data: seed, attrs: map[string]string{EventTimeAttribute: "1899-12-31T23:59:59Z"},
			wantErr: "invalid: momento_evento 1899-12-31T23:59:59Z is outside the years 1900 to 8999"},
		{name: "event time in year 9000", data: seed, attrs: map[string]string{EventTimeAttribute: "9000-01-01T00:00:00Z"},
			wantErr: "invalid: momento_evento 9000-01-01T00:00:00Z is outside the years 1900 to 8999"},
		{name: "far future event time", data: seed, attrs: map[string]string{EventTimeAttribute: "2300-01-01T00:00:00Z"},
			wantErr: "invalid: momento_evento 2300-01-01T00:00:00Z is more than 24h0m0s ahead of processing time 2026-03-14T17:45:00Z"},
		{name: "event time just inside the skew", data: seed, attrs: map[string]string{EventTimeAttribute: "2026-03-15T17:45:00Z"},
			want: seedAt(time.Date(2026, 3, 15, 17, 45, 0, 0, time.UTC))},
		{name: "event time a nanosecond beyond the skew", data: seed, attrs: map[string]string{EventTimeAttribute: "2026-03-15T17:45:00.000000001Z"},
			wantErr: "invalid: momento_evento 2026-03-15T17:45:00.000000001Z is more than 24h0m0s ahead of processing time 2026-03-14T17:45:00Z"},
		{name: "without a clock, no skew check", data: `{"pedido_id":"P-1","pais":"ES","importe_total":"1"}`, noClock: true,
			attrs: map[string]string{EventTimeAttribute: "2300-01-01T00:00:00Z"},
			want:  Order{PedidoID: "P-1", Pais: "ES", ImporteTotal: dec("1"), EventTime: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "pedido_id too long", data: `{"pedido_id":"` + strings.Repeat("P", MaxPedidoIDBytes+1) + `","pais":"ES","importe_total":"1"}`,
			wantErr: "invalid: pedido_id longer than 256 bytes"},
		{name: "cliente_id too long", data: `{"pedido_id":"P","cliente_id":"` + strings.Repeat("C", MaxClienteIDBytes+1) + `","pais":"ES","importe_total":"1"}`,
			wantErr: "invalid: cliente_id longer than 256 bytes"},
		{name: "sku too long", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"1"},{"sku":"` + strings.Repeat("S", MaxSKUBytes+1) + `","cantidad":1,"precio_unitario":"1"}]}`,
			wantErr: "invalid: lineas[1].sku longer than 256 bytes"},
		// encoding/json turns an invalid UTF-8 byte and an unpaired surrogate
		// escape into U+FFFD, so two different pedido_ids ("A-\ud800",
		// "A-\udbff") would decode equal and the second be answered duplicate.
		// Such text is an invalid message, named as the CSV path names it.
		{name: "high surrogate alone", data: body(`A-\ud800`),
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "another high surrogate alone", data: body(`A-\udbff`),
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \udbff at byte 16`},
		{name: "low surrogate alone", data: body(`A-\uDC00`),
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \uDC00 at byte 16`},
		{name: "high surrogate before a non-surrogate escape", data: body(`A-\ud800\u0041`),
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "high surrogate before two highs", data: body(`A-\ud800\ud800\udc00`),
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "raw 0xff", data: body("B-\xff"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xff) is not UTF-8`},
		{name: "raw 0xfe", data: body("B-\xfe"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xfe) is not UTF-8`},
		{name: "truncated sequence", data: body("B-\xc3"),
			wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xc3) is not UTF-8`},
		{name: "encoded surrogate", data: body("B-\xed\xa0\x80"),
			wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xed) is not UTF-8`},
		{name: "in cliente_id", data: `{"pedido_id":"P","cliente_id":"C-\udfff","pais":"ES","importe_total":"1"}`,
			wantErr: `invalid: invalid_utf8: "cliente_id": unpaired surrogate escape \udfff at byte 33`},
		{name: "in a line's sku", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"S-` + "\x80" +
			`","cantidad":1,"precio_unitario":"1"}]}`, wantErr: `invalid: invalid_utf8: "lineas": byte 69 (0x80) is not UTF-8`},
		{name: "in a key", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","x\ud800":1}`,
			wantErr: `invalid: invalid_utf8: body: unpaired surrogate escape \ud800 at byte 51`},
		{name: "surrogate pair", data: body(`A-\ud83d\ude00`), want: valid("A-😀")},
		{name: "escaped backslash before u", data: body(`A-\\ud800`), want: valid(`A-\ud800`)},
		{name: "U+FFFD itself", data: body(`A-\ufffd`), want: valid("A-\ufffd")},
		{name: "non-ASCII UTF-8", data: body("A-ñ€😀"), want: valid("A-ñ€😀")},
	}
	rules := Rules{IsCountry: countries, Now: time.Date(2026, 3, 14, 17, 45, 0, 0, time.UTC), MaxClockSkew: DefaultMaxClockSkew}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.attrs == nil {
				tt.attrs = map[string]string{EventTimeAttribute: "2026-03-14T18:42:00+01:00"}
			}
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
