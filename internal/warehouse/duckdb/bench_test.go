package duckdb

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// benchRows and benchObject are the reference order file's size and name.
const (
	benchRows   = 800_000
	benchObject = "gs://landing/exportaciones/2026/03/14/pedidos.csv"
)

// usage returns the process's CPU time, reported beside wall time on a
// shared machine, and its peak resident set: a Load must stream, not hold
// the file.
func usage() (cpu time.Duration, maxRSSMiB float64) {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano()), float64(r.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkLoad loads the 800,000-row order file, a new generation per
// iteration, into an on-disk database.
func BenchmarkLoad(b *testing.B) {
	w := open(b, filepath.Join(b.TempDir(), "wh.duckdb"), Options{})
	ctx := context.Background()
	cpu0, _ := usage()
	i := 0
	for b.Loop() {
		i++
		res, err := w.Load(ctx, warehouse.Load{ID: "bench-" + strconv.Itoa(i), Table: warehouse.LineasPedido,
			Rows: warehousetest.OrderLines(benchRows, benchObject, int64(i))})
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != benchRows {
			b.Fatalf("loaded %d rows, want %d", res.Rows, benchRows)
		}
	}
	cpu, rss := usage()
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64((cpu-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(rss, "maxRSS-MiB")
}

// BenchmarkRefreshDaily rebuilds the three dates of one 800,000-row file
// in a table that holds two such files (as after a correction).
func BenchmarkRefreshDaily(b *testing.B) {
	w := open(b, filepath.Join(b.TempDir(), "wh.duckdb"), Options{})
	ctx := context.Background()
	for gen := range int64(2) {
		if _, err := w.Load(ctx, warehouse.Load{ID: "gen-" + strconv.FormatInt(gen, 10), Table: warehouse.LineasPedido,
			Rows: warehousetest.OrderLines(benchRows, benchObject, gen+1)}); err != nil {
			b.Fatal(err)
		}
	}
	today := warehouse.DateOf(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC))
	dates := []int32{today - 1, today - 2, today - 3}
	cpu0, _ := usage()
	for b.Loop() {
		if err := w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, dates); err != nil {
			b.Fatal(err)
		}
	}
	cpu, _ := usage()
	b.ReportMetric(float64((cpu-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	res, err := w.Query(ctx, "SELECT COUNT(*), SUM(lineas) FROM ventas_diarias_sku")
	if err != nil {
		b.Fatal(err)
	}
	if got := res.Rows[0][1]; got != strconv.Itoa(benchRows) {
		b.Fatalf("aggregate counts %s lines, want %d (newest generation only)", got, benchRows)
	}
}

// BenchmarkEncode is the Go side of a Load: rendering rows as spool CSV,
// which runs on the caller's goroutine while DuckDB inserts.
func BenchmarkEncode(b *testing.B) {
	t, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		b.Fatal(err)
	}
	src := warehousetest.OrderLines(benchRows, benchObject, 1)
	rows := make([][]warehouse.Value, 0, 4096)
	for len(rows) < cap(rows) && src.Next() {
		rows = append(rows, append([]warehouse.Value(nil), src.Row()...))
	}
	enc := csvEncoder{schema: t.Schema}
	var bytes int
	for i := 0; b.Loop(); i++ {
		line, err := enc.append(enc.buf[:0], rows[i%len(rows)])
		if err != nil {
			b.Fatal(err)
		}
		enc.buf = line
		bytes += len(line)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/row")
}
