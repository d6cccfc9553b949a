package order

import (
	"runtime"
	"strings"
	"testing"
)

// TestParseRefusesTextDecodingWouldChange: encoding/json turns an invalid
// UTF-8 byte and an unpaired surrogate escape into U+FFFD, so two different
// pedido_ids ("A-\ud800", "A-\udbff") would decode equal and the second be
// answered duplicate. Such text is an invalid message, named as the CSV path
// names it (invalid_utf8).
func TestParseRefusesTextDecodingWouldChange(t *testing.T) {
	at := map[string]string{EventTimeAttribute: "2026-03-14T18:42:00+01:00"}
	order := func(id string) string { return `{"pedido_id":"` + id + `","pais":"ES","importe_total":"10.00"}` }
	tests := []struct {
		name    string
		data    string
		wantErr string // "" for a valid order
	}{
		{name: "high surrogate alone", data: order(`A-\ud800`), wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "another high surrogate alone", data: order(`A-\udbff`), wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \udbff at byte 16`},
		{name: "low surrogate alone", data: order(`A-\uDC00`), wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \uDC00 at byte 16`},
		{name: "high surrogate before a non-surrogate escape", data: order(`A-\ud800\u0041`), wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "high surrogate before two highs", data: order(`A-\ud800\ud800\udc00`), wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`},
		{name: "raw 0xff", data: order("B-\xff"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xff) is not UTF-8`},
		{name: "raw 0xfe", data: order("B-\xfe"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xfe) is not UTF-8`},
		{name: "truncated sequence", data: order("B-\xc3"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xc3) is not UTF-8`},
		{name: "encoded surrogate", data: order("B-\xed\xa0\x80"), wantErr: `invalid: invalid_utf8: "pedido_id": byte 16 (0xed) is not UTF-8`},
		{name: "in cliente_id", data: `{"pedido_id":"P","cliente_id":"C-\udfff","pais":"ES","importe_total":"1"}`, wantErr: `invalid: invalid_utf8: "cliente_id": unpaired surrogate escape \udfff at byte 33`},
		{name: "in a line's sku", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"S-` + "\x80" + `","cantidad":1,"precio_unitario":"1"}]}`,
			wantErr: `invalid: invalid_utf8: "lineas": byte 69 (0x80) is not UTF-8`},
		{name: "in a key", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","x\ud800":1}`, wantErr: `invalid: invalid_utf8: body: unpaired surrogate escape \ud800 at byte 51`},
		{name: "surrogate pair", data: order(`A-\ud83d\ude00`)},
		{name: "escaped backslash before u", data: order(`A-\\ud800`)},
		{name: "U+FFFD itself", data: order(`A-\ufffd`)},
		{name: "non-ASCII UTF-8", data: order("A-ñ€😀")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), at, countries)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v, want a valid order", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
			}
			if _, ok := err.(*Invalid); !ok {
				t.Fatalf("error %T is not *Invalid", err)
			}
		})
	}
}

// TestParseBoundsArraysBeforeDecoding: an array longer than MaxLineas is
// refused from its text, before encoding/json allocates an element per item
// (1 MB of "{}," would be 350,000 lines, 14 MB of them).
func TestParseBoundsArraysBeforeDecoding(t *testing.T) {
	at := map[string]string{EventTimeAttribute: "2026-03-14T18:42:00+01:00"}
	items := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	line := `{"sku":"S","cantidad":1,"precio_unitario":"1"}`
	tests := []struct {
		name     string
		data     string
		wantErr  string
		maxAlloc uint64 // bytes Parse may allocate
	}{
		{name: "MaxLineas lines", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(MaxLineas, line) + `]}`, maxAlloc: 8 << 20},
		{name: "one line more", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(MaxLineas+1, line) + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "a million empty objects", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(1_000_000, "{}") + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "a million numbers, which decode to zero lines", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(1_000_000, "1") + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "spelled otherwise, as json matches keys", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","LINEAS":[` + items(MaxLineas+1, "{}") + `]}`,
			wantErr: `invalid: "LINEAS" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "commas and brackets inside strings are not elements", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"` + strings.Repeat(`,[\"{`, 20000) + `","cantidad":1,"precio_unitario":"1"}]}`,
			wantErr: "invalid: lineas[0].sku longer than 256 bytes", maxAlloc: 2 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			var err error
			alloc := allocated(func() { _, err = Parse(data, at, countries) })
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Parse: %v, want a valid order", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("Parse error = %v, want %q", err, tt.wantErr)
			}
			if alloc > tt.maxAlloc {
				t.Errorf("Parse of %d bytes allocated %d bytes, want at most %d", len(data), alloc, tt.maxAlloc)
			}
		})
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestLines(t *testing.T) {
	tests := []struct {
		name string
		data string
		want int
	}{
		{name: "two lines", data: `{"pedido_id":"P","lineas":[{"sku":"A"}, {"sku":"B,C"}]}`, want: 2},
		{name: "no lines", data: `{"pedido_id":"P","lineas":[]}`, want: 0},
		{name: "strings hold brackets and escaped quotes", data: `{"pedido_id":"[\"{,","lineas":[{"sku":"],\",["},{"sku":"\\"}]}`, want: 2},
		{name: "refused text decodes no line", data: `{"pedido_id":"\ud800","lineas":[{}]}`, want: 0},
		{name: "beyond MaxLineas decodes no line", data: `{"lineas":[` + strings.Repeat("{},", MaxLineas) + `{}]}`, want: 0},
		{name: "at MaxLineas", data: `{"lineas":[` + strings.Repeat("{},", MaxLineas-1) + `{}]}`, want: MaxLineas},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lines([]byte(tt.data)); got != tt.want {
				t.Errorf("Lines = %d, want %d", got, tt.want)
			}
		})
	}
}
