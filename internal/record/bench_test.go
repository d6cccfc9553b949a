package record

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// BenchmarkReader reads order lines as the ERP writes them (a quoted decimal
// comma in every row) and without quotes, to show what each path costs.
func BenchmarkReader(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"unquoted", "PED-2026-0100001,1,2026-03-14,MOCH-40L-AZ,2,89.90,CLI-00417,ES\r\n"},
		{"quoted_price", "PED-2026-0100001,1,2026-03-14,MOCH-40L-AZ,2,\"89,90\",CLI-00417,ES\r\n"},
		{"quoted_everything", "\"PED-2026-0100001\",\"1\",\"2026-03-14\",\"MOCH-40L-AZ\",\"2\",\"89,90\",\"CLI-00417\",\"ES\"\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const rows = 100_000
			data := []byte(strings.Repeat(bc.line, rows))
			src := bytes.NewReader(data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for range b.N {
				src.Reset(data)
				r := NewReader(src, Options{})
				n := 0
				for _, err := r.Next(); !errors.Is(err, io.EOF); _, err = r.Next() {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != rows {
					b.Fatalf("%d records", n)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
