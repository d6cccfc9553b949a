package warehousetest

import (
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// OrderLines is a RowSource of n synthetic lineas_pedido rows of file
// object, generation gen, as an ingest produces them (one reused buffer):
// three dates before 2026-03-15, 1,000 orders and clients, 500 SKUs, 12
// countries. The same arguments give the same rows.
func OrderLines(n int, object string, gen int64) warehouse.RowSource {
	o := &orderLines{n: n, gen: gen, object: object, now: time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC), row: make([]warehouse.Value, 13)}
	for i := range 1000 {
		o.ids = append(o.ids, "P-"+strconv.Itoa(100000+i))
		o.clients = append(o.clients, "C-"+strconv.Itoa(500+i))
	}
	for i := range 500 {
		o.skus = append(o.skus, "SKU-"+strconv.Itoa(1000+i)+"-AZ")
	}
	return o
}

type orderLines struct {
	n, i               int
	gen                int64
	object             string
	now                time.Time
	row                []warehouse.Value
	ids, skus, clients []string
}

var paises = []string{"ES", "PT", "FR", "DE", "IT", "NL", "BE", "AT", "CH", "GB", "IE", "PL"}

func (o *orderLines) Next() bool {
	if o.i >= o.n {
		return false
	}
	i := o.i
	o.i++
	cantidad := int64(1 + i%5)
	precio := numeric.FromNanos(int64(1+i%9000) * 10_000_000) // 0.01 .. 90.00
	importe, _ := precio.MulInt(cantidad)                     // at most 450.00: no overflow
	r := o.row
	r[0] = warehouse.StringValue(o.ids[i%len(o.ids)])
	r[1] = warehouse.IntValue(int64(1 + i%4))
	r[2] = warehouse.DateValue(warehouse.DateOf(o.now) - int32(1+i%3))
	r[3] = warehouse.StringValue(o.skus[(i*7)%len(o.skus)])
	r[4] = warehouse.IntValue(cantidad)
	r[5] = warehouse.DecValue(precio)
	r[6] = warehouse.StringValue(o.clients[(i*13)%len(o.clients)])
	r[7] = warehouse.StringValue(paises[i%len(paises)])
	r[8] = warehouse.DecValue(importe)
	r[9] = warehouse.StringValue(o.object)
	r[10] = warehouse.IntValue(o.gen)
	r[11] = warehouse.IntValue(int64(i + 2))
	r[12] = warehouse.TimeValue(o.now)
	return true
}

func (o *orderLines) Row() []warehouse.Value { return o.row }
func (o *orderLines) Err() error             { return nil }
