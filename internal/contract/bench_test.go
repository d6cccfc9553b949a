package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// orderLines generates an ERP order-line export as the Spanish ERP writes
// it: CRLF, quoted decimal-comma prices, lower-case countries now and then,
// an empty customer for guest checkouts.
func orderLines(rows int) []byte {
	rng := rand.New(rand.NewPCG(42, 1))
	skus := []string{"MOCH-40L-AZ", "MOCH-40L-NG", "BAST-TREK-AL", "GUANT-GTX-M", "SACO-DORMIR-5", "CUERDA-60M", "GORRO-LANA", "CHAQ-PLUMA-L", "BOTA-TREK-42", "FRONTAL-400"}
	countries := []string{"ES", "ES", "ES", "PT", "FR", "IT", "DE", "es", "AD"}
	var b bytes.Buffer
	b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n")
	order, line := 100000, 0
	for i := 0; i < rows; i++ {
		if line == 0 || rng.IntN(3) == 0 {
			order++
			line = 0
		}
		line++
		cliente := fmt.Sprintf("CLI-%05d", rng.IntN(50000))
		if rng.IntN(10) == 0 {
			cliente = ""
		}
		fmt.Fprintf(&b, "PED-2026-%07d,%d,2026-03-%02d,%s,%d,\"%d,%02d\",%s,%s\r\n",
			order, line, 1+rng.IntN(28), skus[rng.IntN(len(skus))], 1+rng.IntN(4),
			5+rng.IntN(300), rng.IntN(100), cliente, countries[rng.IntN(len(countries))])
	}
	return b.Bytes()
}

// BenchmarkParseValidate measures the pure ingest path per order line:
// record reader, header binding, validation and normalisation into
// warehouse values, from an in-memory file.
func BenchmarkParseValidate(b *testing.B) {
	const rows = 200_000
	data := orderLines(rows)
	reg, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	f, _ := reg.Feed("lineas_pedido")
	out := make([]warehouse.Value, f.Width())
	src := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for range b.N {
		src.Reset(data)
		r := record.NewReader(src, record.Options{})
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

// orderLinesExcel is orderLines as Excel saves it in a Spanish locale:
// semicolons, unquoted decimal commas with thousands grouping on large
// prices, day-first dates.
func orderLinesExcel(rows int) []byte {
	rng := rand.New(rand.NewPCG(42, 1))
	skus := []string{"MOCH-40L-AZ", "MOCH-40L-NG", "BAST-TREK-AL", "GUANT-GTX-M", "SACO-DORMIR-5", "CUERDA-60M", "GORRO-LANA", "CHAQ-PLUMA-L", "BOTA-TREK-42", "FRONTAL-400"}
	countries := []string{"ES", "ES", "ES", "PT", "FR", "IT", "DE", "es", "AD"}
	var b bytes.Buffer
	b.WriteString("pedido_id;linea;fecha;sku;cantidad;precio_unitario;cliente_id;pais\r\n")
	order, line := 100000, 0
	for i := 0; i < rows; i++ {
		if line == 0 || rng.IntN(3) == 0 {
			order++
			line = 0
		}
		line++
		cliente := fmt.Sprintf("CLI-%05d", rng.IntN(50000))
		if rng.IntN(10) == 0 {
			cliente = ""
		}
		price := fmt.Sprintf("%d,%02d", 5+rng.IntN(300), rng.IntN(100))
		if rng.IntN(5) == 0 {
			price = fmt.Sprintf("%d.%03d,%02d", 1+rng.IntN(9), rng.IntN(1000), rng.IntN(100))
		}
		fmt.Fprintf(&b, "PED-2026-%07d;%d;%02d/03/2026;%s;%d;%s;%s;%s\r\n",
			order, line, 1+rng.IntN(28), skus[rng.IntN(len(skus))], 1+rng.IntN(4),
			price, cliente, countries[rng.IntN(len(countries))])
	}
	return b.Bytes()
}

// orderLinesCP1252 is orderLines with customer names in Windows-1252, one
// in three holding an accented letter.
func orderLinesCP1252(rows int) []byte {
	names := [][]byte{[]byte("Mu\xf1oz Ib\xe1\xf1ez"), []byte("CLI-00042"), []byte("Garc\xeda")}
	src := orderLines(rows)
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
	out := make([]warehouse.Value, f.Width())
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
	reg, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	f, _ := reg.Feed("lineas_pedido")
	benchFeed(b, f, orderLinesExcel(200_000))
}

// BenchmarkParseValidateWindows1252 is BenchmarkParseValidate on a
// Windows-1252 export, decoded per field.
func BenchmarkParseValidateWindows1252(b *testing.B) {
	reg := testRegistry(b)
	f, ok := reg.Feed("pedidos_cp1252")
	if !ok {
		b.Fatal("no pedidos_cp1252 test feed")
	}
	benchFeed(b, f, orderLinesCP1252(200_000))
}
