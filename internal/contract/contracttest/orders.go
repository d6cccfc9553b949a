// Package contracttest generates contract-shaped test data shared by the
// benchmarks of the packages that parse and validate feeds.
package contracttest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

var (
	skus      = []string{"MOCH-40L-AZ", "MOCH-40L-NG", "BAST-TREK-AL", "GUANT-GTX-M", "SACO-DORMIR-5", "CUERDA-60M", "GORRO-LANA", "CHAQ-PLUMA-L", "BOTA-TREK-42", "FRONTAL-400"}
	countries = []string{"ES", "ES", "ES", "PT", "FR", "IT", "DE", "es", "AD"}
)

// OrderLines generates an ERP order-line export (lineas_pedido) as the
// Spanish ERP writes it: CRLF, quoted decimal-comma prices, lower-case
// countries now and then, an empty customer for guest checkouts. The same
// rows count gives the same bytes.
func OrderLines(rows int) []byte { return orderLines(rows, false) }

// OrderLinesExcel is OrderLines as Excel saves it in a Spanish locale:
// semicolons, unquoted decimal commas with thousands grouping on large
// prices, day-first dates.
func OrderLinesExcel(rows int) []byte { return orderLines(rows, true) }

func orderLines(rows int, excel bool) []byte {
	rng := rand.New(rand.NewPCG(42, 1))
	var b bytes.Buffer
	if excel {
		b.WriteString("pedido_id;linea;fecha;sku;cantidad;precio_unitario;cliente_id;pais\r\n")
	} else {
		b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n")
	}
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
		// The random draws keep their order per layout, so each layout's
		// bytes stay what its benchmark has always measured.
		var price string
		if excel {
			price = fmt.Sprintf("%d,%02d", 5+rng.IntN(300), rng.IntN(100))
			if rng.IntN(5) == 0 {
				price = fmt.Sprintf("%d.%03d,%02d", 1+rng.IntN(9), rng.IntN(1000), rng.IntN(100))
			}
		}
		day, sku, qty := 1+rng.IntN(28), skus[rng.IntN(len(skus))], 1+rng.IntN(4)
		if !excel {
			price = fmt.Sprintf("\"%d,%02d\"", 5+rng.IntN(300), rng.IntN(100))
		}
		country := countries[rng.IntN(len(countries))]
		if excel {
			fmt.Fprintf(&b, "PED-2026-%07d;%d;%02d/03/2026;%s;%d;%s;%s;%s\r\n", order, line, day, sku, qty, price, cliente, country)
		} else {
			fmt.Fprintf(&b, "PED-2026-%07d,%d,2026-03-%02d,%s,%d,%s,%s,%s\r\n", order, line, day, sku, qty, price, cliente, country)
		}
	}
	return b.Bytes()
}
