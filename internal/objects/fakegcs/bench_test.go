package fakegcs

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/objects"
)

// BenchmarkLocalRoundTrip uploads a 40 MB order-lines file through the
// filesystem-backed fake and downloads it again, with the real client. It
// reports per-direction times and the peak growth of the heap (client and
// fake share this process, as in the CLI's demo). The fake-native variants
// bypass streamingUploads to show what the fake's own upload path costs.
func BenchmarkLocalRoundTrip(b *testing.B) {
	const size = 40 << 20
	for _, bc := range []struct {
		name   string
		native bool
		chunk  int
	}{
		{"streaming/default-chunk", false, objects.DefaultChunkSize},
		{"streaming/single-shot", false, 0},
		{"fake-native/default-chunk", true, objects.DefaultChunkSize},
		{"fake-native/single-shot", true, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := Start(b.TempDir(), bucket)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if bc.native {
				uploads := l.uploads
				l.uploads = nil // route everything to the fake
				defer func() { l.uploads = uploads }()
			}
			c, err := l.Client(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			g, _ := objects.NewGCS(c)
			g = g.WithChunkSize(bc.chunk)

			b.SetBytes(2 * size)
			runtime.GC()
			peak := watchHeapBench()
			cpu0 := cpuTime()
			var up, down time.Duration
			for b.Loop() {
				t0 := time.Now()
				w := g.Create(b.Context(), bucket, "exportaciones/2026/03/14/big.csv", "text/csv", nil)
				if _, err := io.Copy(w, io.LimitReader(&csvLines{}, size)); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				r, err := g.Open(b.Context(), bucket, "exportaciones/2026/03/14/big.csv", w.Attrs().Generation)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, r)
				r.Close()
				if err != nil || n != size {
					b.Fatalf("download %d bytes, %v", n, err)
				}
				up += t1.Sub(t0)
				down += time.Since(t1)
			}
			growth := peak()
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(up.Milliseconds())/float64(b.N), "upload-ms/op")
			b.ReportMetric(float64(down.Milliseconds())/float64(b.N), "download-ms/op")
			b.ReportMetric(float64(growth)/(1<<20), "peak-heap-growth-MiB")
			b.ReportMetric(float64(peakRSS())/(1<<20), "process-peak-RSS-MiB")
		})
	}
}

// csvLines repeats a block of realistic order lines without allocating.
type csvLines struct{ off int }

var csvBlock = func() []byte {
	var buf bytes.Buffer
	for i := range 200 {
		buf.WriteString("P-" + strconv.Itoa(100000+i) + ",1,2026-03-14,SKU-" + strconv.Itoa(i%97) + ",2,\"89,90\",C-" + strconv.Itoa(i%13) + ",ES\n")
	}
	return buf.Bytes()
}()

func (c *csvLines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m := copy(p[n:], csvBlock[c.off:])
		n += m
		c.off = (c.off + m) % len(csvBlock)
	}
	return n, nil
}

// watchHeapBench samples the heap (live plus not yet swept objects) until
// the returned function is called, and returns the peak growth.
func watchHeapBench() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	return func() uint64 {
		once.Do(func() { close(stop); <-done })
		return max(peak, base) - base
	}
}

// cpuTime is the user+system CPU time of the process: client and fake
// together, and unlike wall time not inflated by other load on the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's high-water resident set (VmHWM): it only means
// something when one benchmark runs per process.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
