//go:build unix

package cost

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the processor time (user + system) this process has used: the
// vCPU time Cloud Run would need for the same work, whatever the goroutines
// waited for in between.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fastDir returns a directory on a memory file system when there is one:
// bbolt fsyncs every commit, which costs wall time, not operations.
func fastDir(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "alpipe-cost-"); err == nil {
			tb.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return tb.TempDir()
}

// benchStream replays the default scenario one simulated minute per
// iteration, after the warm-up, and reports the CPU time of the Handle
// calls per delivery and of the Tick calls per tick.
func benchStream(b *testing.B) {
	sc, err := DefaultScenario()
	if err != nil {
		b.Fatal(err)
	}
	sim, closeStore, err := newSimulation(fastDir(b), sc)
	if err != nil {
		b.Fatal(err)
	}
	defer closeStore()
	ctx := context.Background()
	at := sc.Start.Add(sc.WarmUp)
	if err := sim.runUntil(ctx, at); err != nil {
		b.Fatal(err)
	}
	var handleCPU, tickCPU time.Duration
	var handles, ticks int64
	sim.aroundHandle = func(f func() error) error {
		t0 := cpuTime(b)
		err := f()
		handleCPU += cpuTime(b) - t0
		handles++
		return err
	}
	sim.aroundTick = func(f func() error) error {
		t0 := cpuTime(b)
		err := f()
		tickCPU += cpuTime(b) - t0
		ticks++
		return err
	}
	b.ResetTimer()
	for b.Loop() {
		at = at.Add(sc.TickEvery)
		if err := sim.runUntil(ctx, at); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(handleCPU.Nanoseconds())/float64(max(1, handles)), "cpu-ns/order")
	b.ReportMetric(float64(tickCPU.Nanoseconds())/float64(max(1, ticks)), "cpu-ns/tick")
}

// benchFile ingests the default export once per iteration, each time as a
// new object generation with its own MD5, and reports the CPU time per file.
func benchFile(b *testing.B) {
	fs := DefaultFileScenario()
	data := ExportFile(fs)
	svc, store, objs, _, err := newFileRig(fastDir(b))
	if err != nil {
		b.Fatal(err)
	}
	defer store.close()
	ctx := context.Background()
	var cpu time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n++
		obj := objs.put("alpinashop-catalogo", "exportaciones/"+fs.Day.Format("2006/01/02")+"/lineas_pedido.csv", data, "bench-"+time.Duration(n).String())
		t0 := cpuTime(b)
		if _, err := svc.Ingest(ctx, obj); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - t0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(1, n)), "cpu-ns/file")
}

// BenchmarkStreamCPU prints the CPU figures of the real-time path:
// go test -run XXX -bench StreamCPU -cpu 1 ./tools/cost/
func BenchmarkStreamCPU(b *testing.B) { benchStream(b) }

// BenchmarkFileCPU prints the CPU figure of one export's ingestion:
// go test -run XXX -bench FileCPU -cpu 1 ./tools/cost/
func BenchmarkFileCPU(b *testing.B) { benchFile(b) }

// measureCPU runs the benchmarks and returns their figures.
func measureCPU(t *testing.T) CPU {
	t.Helper()
	on := time.Now().UTC().Format(time.DateOnly) + ", " + machine()
	s := testing.Benchmark(benchStream)
	f := testing.Benchmark(benchFile)
	if s.N == 0 || f.N == 0 {
		t.Fatal("a CPU benchmark failed (see its output)")
	}
	return CPU{
		Order: Figure{Nanos: int64(s.Extra["cpu-ns/order"]), Per: "delivery",
			Command: "go test -run XXX -bench StreamCPU -cpu 1 ./tools/cost/", Metric: "cpu-ns/order (getrusage user+sys around Handle)", On: on},
		Tick: Figure{Nanos: int64(s.Extra["cpu-ns/tick"]), Per: "tick",
			Command: "go test -run XXX -bench StreamCPU -cpu 1 ./tools/cost/", Metric: "cpu-ns/tick (getrusage user+sys around Tick)", On: on},
		File: Figure{Nanos: int64(f.Extra["cpu-ns/file"]), Per: "file of " + Num(ri(DefaultFileScenario().Lines), 0) + " lines",
			Command: "go test -run XXX -bench FileCPU -cpu 1 ./tools/cost/", Metric: "cpu-ns/file (getrusage user+sys around Ingest)", On: on},
		Encode: EncodeFigure,
	}
}
