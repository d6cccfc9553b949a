package contract

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/alpinashop/alpipe/internal/contract/contracttest"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// BenchmarkParseValidate measures the pure ingest path per order line, from
// an in-memory file.
func BenchmarkParseValidate(b *testing.B) {
	benchFeed(b, feed(b, "lineas_pedido"), contracttest.OrderLines(200_000))
}

// orderLinesCP1252 is contracttest.OrderLines with customer names in
// Windows-1252, one in three holding an accented letter.
func orderLinesCP1252(rows int) []byte {
	names := [][]byte{[]byte("Mu\xf1oz Ib\xe1\xf1ez"), []byte("CLI-00042"), []byte("Garc\xeda")}
	src := contracttest.OrderLines(rows)
	var b bytes.Buffer
	for i, l := range bytes.SplitAfter(src, []byte("\r\n")) {
		if i == 0 || len(l) == 0 {
			b.Write(l)
			continue
		}
		f := bytes.Split(l, []byte(","))
		f[7] = names[i%len(names)] // cliente_id; the quoted price holds a comma
		b.Write(bytes.Join(f, []byte(",")))
	}
	return b.Bytes()
}

// benchFeed runs data through the reader and feed as the ingester does,
// the delimiter sniffed from the header.
func benchFeed(b *testing.B, f *Feed, data []byte) {
	out := make([]schema.Value, f.Width())
	src := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for range b.N {
		src.Reset(data)
		r := record.NewReader(src, record.Options{Comma: f.SniffDelimiter(data[:min(len(data), 8000)]), Quote: f.Quote()})
		h, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		bind, err := f.Bind(h.Fields)
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rej := bind.Validate(rec.Fields, out); !rej.OK() {
				b.Fatalf("line %d: %+v", rec.Line, rej)
			}
			total++
		}
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/row")
}

// BenchmarkParseValidateExcel is BenchmarkParseValidate on a Spanish Excel
// export: semicolons sniffed, grouped prices, day-first dates.
func BenchmarkParseValidateExcel(b *testing.B) {
	benchFeed(b, feed(b, "lineas_pedido"), contracttest.OrderLinesExcel(200_000))
}

// BenchmarkParseValidateWindows1252 is BenchmarkParseValidate on a
// Windows-1252 export, decoded per field.
func BenchmarkParseValidateWindows1252(b *testing.B) {
	f, ok := testRegistry(b).Feed("pedidos_cp1252")
	if !ok {
		b.Fatal("no pedidos_cp1252 test feed")
	}
	benchFeed(b, f, orderLinesCP1252(200_000))
}
