package fakegcs_test

import (
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
)

// BenchmarkLocalRoundTrip uploads a file of the daily ERP export's size to
// the filesystem-backed fake and downloads it again with the real client:
// times per direction, and the peak heap growth (client and fake share this
// process), which follows the file's size.
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
				if _, err := io.Copy(w, io.LimitReader(objectstest.NewGenerator(1), size)); err != nil {
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
