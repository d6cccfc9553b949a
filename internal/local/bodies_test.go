package local

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// filler reads as prefix, then n bytes of 'x', then suffix, without holding
// them: the client side of a huge request allocates nothing, so what the
// process allocates is the server's doing.
type filler struct {
	prefix, suffix *strings.Reader
	n              int64
}

func newFiller(prefix string, n int64, suffix string) *filler {
	return &filler{prefix: strings.NewReader(prefix), suffix: strings.NewReader(suffix), n: n}
}

func (f *filler) Read(p []byte) (int, error) {
	if f.prefix.Len() > 0 {
		return f.prefix.Read(p)
	}
	if f.n > 0 {
		k := min(int64(len(p)), f.n)
		for i := range k {
			p[i] = 'x'
		}
		f.n -= k
		return int(k), nil
	}
	return f.suffix.Read(p)
}

// TestLargeBodiesAreBounded sends 50 MB requests to the endpoints of serve
// that read a body. Each used to be read whole: a 50 MB query cost 1.4 GB of
// allocations. The bound is on allocations while the request runs, which
// is what the process's memory grows by.
func TestLargeBodiesAreBounded(t *testing.T) {
	const size = 50 << 20
	tests := []struct {
		name, path, prefix, suffix string
		wantCode                   int
		maxAllocMiB                uint64
	}{
		{name: "query", path: localapi.QueryPath, prefix: `{"sql": "SELECT '`, suffix: `'"}`, wantCode: http.StatusRequestEntityTooLarge, maxAllocMiB: 8},
		{name: "clock", path: "/_local/clock?now=2026-03-14T17:00:00Z", wantCode: http.StatusOK, maxAllocMiB: 8},
		{name: "upload, held in memory by the fake", path: "/upload/storage/v1/b/" + localapi.StagingBucket + "/o?uploadType=media&name=big.bin", wantCode: http.StatusOK, maxAllocMiB: 640}, // the fake holds a whole upload (at most 64 MiB): about 6 times the body in allocations, 10 under -race
		// Bounded by its own reader: one JSONL line holds at most 10 MB.
		// (The push endpoint reads at most 10 MB too, in functions; a push
		// would leave a dead letter in the data the demo test compares.)
		{name: "replay line", path: "/_local/replay?dates=2026-03-14", prefix: `{"pedido_id": "`, wantCode: http.StatusBadRequest, maxAllocMiB: 48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp, err := http.Post(srv.URL+tt.path, "application/json", newFiller(tt.prefix, size, tt.suffix))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			if resp.StatusCode != tt.wantCode {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, msg, tt.wantCode)
			}
			if got := (after.TotalAlloc - before.TotalAlloc) >> 20; got > tt.maxAllocMiB {
				t.Errorf("a %d MiB request allocated %d MiB, want at most %d", size>>20, got, tt.maxAllocMiB)
			}
		})
	}
}
