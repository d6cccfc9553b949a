package remote

import (
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// BenchmarkCodec is the CPU a remote load adds per row: encoding on the
// client, decoding on the server (each on its own process's core).
func BenchmarkCodec(b *testing.B) {
	tbl, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		b.Fatal(err)
	}
	c := mustCodec(b, tbl)
	src := newOrderLines(4096, "gs://landing/exportaciones/2026/03/14/pedidos.csv", 1)
	var rows [][]warehouse.Value
	for src.Next() {
		rows = append(rows, append([]warehouse.Value(nil), src.Row()...))
	}
	b.Run("encode", func(b *testing.B) {
		var buf []byte
		var bytes int
		for i := 0; b.Loop(); i++ {
			if buf, err = c.appendRow(buf[:0], rows[i%len(rows)]); err != nil {
				b.Fatal(err)
			}
			bytes += len(buf)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/row")
	})
	b.Run("decode", func(b *testing.B) {
		lines := make([][]byte, len(rows))
		for i, r := range rows {
			line, err := c.appendRow(nil, r)
			if err != nil {
				b.Fatal(err)
			}
			lines[i] = line[:len(line)-1]
		}
		dst := make([]warehouse.Value, len(tbl.Schema))
		for i := 0; b.Loop(); i++ {
			if _, err := c.decodeRow(lines[i%len(lines)], dst, false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
