package duckdb

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// benchRows is the size of the reference order file of issue 2.
const benchRows = 800_000

// cpuTime is the process's user+system CPU time. This machine is shared,
// so wall time alone says little; CPU per operation is reported beside it.
func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func maxRSSMiB() float64 {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return float64(r.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkLoad loads the 800,000-row order file into an on-disk database
// through the CSV spool (kept) and through the duckdb-go Appender.
func BenchmarkLoad(b *testing.B) {
	for _, bc := range []struct {
		name string
		bulk func(w *Warehouse) bulkFunc
	}{
		{"spool_csv", func(w *Warehouse) bulkFunc { return w.spoolAndInsert }},
		{"appender", func(*Warehouse) bulkFunc { return appendRows }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := Open(filepath.Join(b.TempDir(), "wh.duckdb"), Options{TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			w.bulk = bc.bulk(w)
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
			b.ReportMetric(maxRSSMiB(), "maxRSS-MiB")
		})
	}
}

// BenchmarkRefreshDaily rebuilds the three dates of one 800,000-row file
// in a table that holds two such files (as after a correction).
func BenchmarkRefreshDaily(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "wh.duckdb"), Options{TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	for gen := range int64(2) {
		if _, err := w.Load(ctx, warehouse.Load{ID: "gen-" + strconv.FormatInt(gen, 10), Table: warehouse.LineasPedido,
			Rows: newOrderLines(benchRows, "gs://landing/exportaciones/2026/03/14/pedidos.csv", gen+1)}); err != nil {
			b.Fatal(err)
		}
	}
	today := warehouse.DateOf(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC))
	dates := []int32{today - 1, today - 2, today - 3}
	cpu0 := cpuTime()
	for b.Loop() {
		if err := w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, dates); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
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
	src := newOrderLines(benchRows, "gs://landing/exportaciones/2026/03/14/pedidos.csv", 1)
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
