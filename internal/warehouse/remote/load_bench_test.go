//go:build cgo

package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkLoad loads the 800,000-row order file into an on-disk DuckDB
// directly and through Client and Handler over loopback HTTP, to show what
// the remote hop costs. Both ends run in this one process here; with
// cmd/server and `alpipe serve` they are two.
func BenchmarkLoad(b *testing.B) {
	for _, bc := range []struct {
		name   string
		remote bool
	}{{"direct", false}, {"remote", true}} {
		b.Run(bc.name, func(b *testing.B) {
			wh, err := duckdb.Open(filepath.Join(b.TempDir(), "wh.duckdb"), duckdb.Options{TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer wh.Close()
			var w Backend = wh
			if bc.remote {
				srv := httptest.NewServer(http.StripPrefix("/w", Handler(wh)))
				defer srv.Close()
				if w, err = New(srv.URL+"/w", nil); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				i++
				res, err := w.Load(ctx, warehouse.Load{ID: "bench-" + strconv.Itoa(i), Table: warehouse.LineasPedido,
					Rows: newOrderLines(benchRows, "gs://landing/exportaciones/2026/03/14/pedidos.csv", int64(i))})
				if err != nil {
					b.Fatal(err)
				}
				if res.Rows != benchRows {
					b.Fatalf("loaded %d rows, want %d", res.Rows, benchRows)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
