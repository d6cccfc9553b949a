package order

import (
	"runtime"
	"strings"
	"testing"
)

// TestParseBoundsArraysBeforeDecoding: an array longer than MaxLineas is
// refused from its text, before encoding/json allocates an element per item
// (1 MB of "{}," would be 350,000 lines, 14 MB of them); Lines counts from
// the same reading the lines Parse decodes.
func TestParseBoundsArraysBeforeDecoding(t *testing.T) {
	at := map[string]string{EventTimeAttribute: "2026-03-14T18:42:00+01:00"}
	items := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	line := `{"sku":"S","cantidad":1,"precio_unitario":"1"}`
	tests := []struct {
		name     string
		data     string
		wantErr  string
		maxAlloc uint64 // bytes Parse may allocate
		lines    int    // Lines(data)
	}{
		{name: "MaxLineas lines", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(MaxLineas, line) + `]}`,
			maxAlloc: 8 << 20, lines: MaxLineas},
		{name: "no lines", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[]}`, maxAlloc: 64 << 10},
		{name: "two lines, a comma in a SKU", maxAlloc: 64 << 10, lines: 2,
			data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + line + `, {"sku":"B,C","cantidad":1}]}`},
		{name: "strings hold brackets and escaped quotes", maxAlloc: 64 << 10, lines: 2,
			data: `{"pedido_id":"[\"{,","pais":"ES","importe_total":"1","lineas":[{"sku":"],\",[","cantidad":1},{"sku":"\\","cantidad":1}]}`},
		{name: "refused text decodes no line", data: `{"pedido_id":"\ud800","pais":"ES","importe_total":"1","lineas":[{}]}`,
			wantErr: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 14`, maxAlloc: 64 << 10},
		{name: "one line more", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(MaxLineas+1, line) + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "a million empty objects", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(1_000_000, "{}") + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "a million numbers, which decode to zero lines", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[` + items(1_000_000, "1") + `]}`,
			wantErr: `invalid: "lineas" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "spelled otherwise, as json matches keys", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","LINEAS":[` + items(MaxLineas+1, "{}") + `]}`,
			wantErr: `invalid: "LINEAS" has more than 2000 elements; an order has at most 2000 lines`, maxAlloc: 64 << 10},
		{name: "commas and brackets inside strings are not elements", data: `{"pedido_id":"P","pais":"ES","importe_total":"1","lineas":[{"sku":"` + strings.Repeat(`,[\"{`, 20000) + `","cantidad":1,"precio_unitario":"1"}]}`,
			wantErr: "invalid: lineas[0].sku longer than 256 bytes", maxAlloc: 2 << 20, lines: 1},
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
			if got := Lines(data); got != tt.lines {
				t.Errorf("Lines = %d, want %d", got, tt.lines)
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
