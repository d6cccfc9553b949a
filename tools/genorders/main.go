// Command genorders writes a synthetic ERP order-lines export for the ingest
// benchmark: CRLF, a BOM, quoted decimal commas, and dirty rows at known
// lines, so the expected counts are exact.
//
//	go run ./tools/genorders -rows 800000 -o /tmp/pedidos.csv
//
// Dirty rows (data line numbers; the header is line 1): every 100,000th row
// from 412,337 on has an unquoted 89,90 (9 columns), and every 100,000th row
// from 250,001 on has a negative quantity; -bad N plants N rows with a
// negative quantity instead, evenly spaced. It prints the expected counts.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
)

func main() {
	rows := flag.Int("rows", 800_000, "data rows to write")
	out := flag.String("o", "pedidos.csv", "output file")
	maxBad := flag.Int("bad", -1, "plant this many rows with a negative quantity, evenly spaced (-1: the dirty rows above)")
	base := flag.Int64("orders-from", 1_000_000, "the first order number: another base gives other content (another MD5), which the ledger does not take for a copy")
	flag.Parse()
	if err := write(*out, *rows, *maxBad, *base); err != nil {
		fmt.Fprintln(os.Stderr, "genorders:", err)
		os.Exit(1)
	}
}

var (
	skus      = []string{"MOCH-40L-AZ", "MOCH-25L-VR", "BOTA-TREK-42", "GORRO-LANA-RJ", "CALCET-MERINO", "FRONTAL-LED", "BASTON-CARB", "CHAQ-GTX-M"}
	prices    = []string{"89,90", "64,50", "129,00", "19,95", "12,50", "39,99", "74,00", "249,00"}
	countries = []string{"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT"}
)

func write(path string, n, maxBad int, orderBase int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("\ufeffpedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n")
	bad := 0
	for i := 1; i <= n; i++ {
		line := i + 1 // physical line number of this row
		k := i % len(skus)
		qty := i%4 + 1
		dirty := maxBad < 0
		if dirty && line >= 250_002 && (line-250_002)%100_000 == 0 || !dirty && maxBad > 0 && i%(n/(maxBad+1)+1) == 0 && bad < maxBad {
			qty = -qty
			bad++
		}
		price := `"` + prices[k] + `"`
		if dirty && line >= 412_337 && (line-412_337)%100_000 == 0 {
			price = "89,90" // unquoted decimal comma: 9 fields
			bad++
		}
		fmt.Fprintf(w, "P-%d,%d,2026-03-%02d,%s,%d,%s,C-%d,%s\r\n",
			orderBase+int64(i/3), i%3+1, i%28+1, skus[k], qty, price, i%50_000, countries[i%len(countries)])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s: %d rows, expected loaded=%d quarantined=%d\n", path, n, n-bad, bad)
	return nil
}
