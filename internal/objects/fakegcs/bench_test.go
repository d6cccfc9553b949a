package fakegcs_test

import (
	"bytes"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

// BenchmarkLocalRoundTrip uploads an order-lines file of the daily ERP
// export's size through the filesystem-backed fake and downloads it again,
// with the real client, and reports per-direction times and the peak growth
// of the heap (client and fake share this process, as in the CLI's demo).
// The fake holds an upload in memory: the growth follows the file's size.
func BenchmarkLocalRoundTrip(b *testing.B) {
	const size = 8_600_000
	const name = "exportaciones/2026/03/14/lineas.csv"
	for _, bc := range []struct {
		name  string
		chunk int
	}{{"default-chunk", objects.DefaultChunkSize}, {"single-shot", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			_, g := objectstest.Fake(b, b.TempDir(), testBucket)
			g = g.WithChunkSize(bc.chunk)
			b.SetBytes(2 * size)
			runtime.GC()
			peak := objectstest.WatchHeap(b)
			var up, down time.Duration
			for b.Loop() {
				t0 := time.Now()
				w := g.Create(b.Context(), testBucket, name, "text/csv", nil)
				if _, err := io.Copy(w, io.LimitReader(&csvLines{}, size)); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				r, err := g.Open(b.Context(), testBucket, name, w.Attrs().Generation)
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
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-growth-MiB")
			b.ReportMetric(float64(up.Milliseconds())/float64(b.N), "upload-ms/op")
			b.ReportMetric(float64(down.Milliseconds())/float64(b.N), "download-ms/op")
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
