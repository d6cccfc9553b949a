package warehousetest

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// BenchRows is the size of the reference order file of issue 2.
const BenchRows = 800_000

// BenchObject is the object name the benchmarks' order files carry.
const BenchObject = "gs://landing/exportaciones/2026/03/14/pedidos.csv"

// CPUTime is the process's user+system CPU time. This machine is shared,
// so wall time alone says little; CPU per operation is reported beside it.
func CPUTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkLoad loads a BenchRows-row OrderLines file, a new generation per
// iteration, into w, and reports rows/s and cpu-ms/op.
func BenchmarkLoad(b *testing.B, w Warehouse) {
	ctx := context.Background()
	cpu0 := CPUTime()
	i := 0
	for b.Loop() {
		i++
		res, err := w.Load(ctx, warehouse.Load{ID: "bench-" + strconv.Itoa(i), Table: warehouse.LineasPedido,
			Rows: OrderLines(BenchRows, BenchObject, int64(i))})
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != BenchRows {
			b.Fatalf("loaded %d rows, want %d", res.Rows, BenchRows)
		}
	}
	b.ReportMetric(float64(BenchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64((CPUTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}
