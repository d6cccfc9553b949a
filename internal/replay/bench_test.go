package replay

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkReplayJSONL replays a day of orders (over 24 hours and 6
// countries) into an in-memory DuckDB; orders/s is the figure to read. The
// state store fsyncs every commit, so the number of workers (orders in
// flight, committed together) is what sets the pace.
func BenchmarkReplayJSONL(b *testing.B) {
	const orders = 2000
	var in bytes.Buffer
	paises := []string{"ES", "PT", "FR", "DE", "IT", "NL"}
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for i := range orders {
		t := day.Add(time.Duration(i) * 24 * time.Hour / orders)
		fmt.Fprintf(&in, `{"momento_evento": %q, "pedido": {"pedido_id": "P-%06d", "pais": %q, "importe_total": "89.90", "lineas": [{"sku": "MOCH-40L-AZ", "cantidad": 1, "precio_unitario": "89.90"}]}}`+"\n",
			t.Format(time.RFC3339), i, paises[i%len(paises)])
	}
	for _, workers := range []int{1, 16, 256, 1024} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				w := openWarehouse(b)
				opts := options(b)
				opts.Workers = workers
				b.StartTimer()
				rep, err := Run(context.Background(), w, NewJSONL(bytes.NewReader(in.Bytes())), "bench", opts)
				if err != nil {
					b.Fatal(err)
				}
				if rep.Accepted != orders || rep.Written != 24*int64(len(paises)) {
					b.Fatalf("accepted %d, wrote %d panes", rep.Accepted, rep.Written)
				}
			}
			b.ReportMetric(float64(orders*b.N)/b.Elapsed().Seconds(), "orders/s")
		})
	}
}
