package local

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// TestServerRefusesTheAttacks sends the attacks to the running
// server: each must be refused while the CLI's own requests still work.
// fake-gcs-server's own /_internal/ routes are not mounted, and no answer
// carries a CORS grant, even to a request the guard lets through.
func TestServerRefusesTheAttacks(t *testing.T) {
	const attacker = "https://attacker.example"
	query, same := localapi.QueryPath, srv.URL // same: the server's own origin, which the guard lets by
	tests := []struct {
		name, method, path, body string
		origin, site, host       string // the Origin, Sec-Fetch-Site and Host headers
		wantStatus               int
		wantBody                 string
	}{
		{name: "cross-site replay writes no pane", path: localapi.ReplayPath, body: `{}`, origin: attacker, wantStatus: http.StatusForbidden, wantBody: "cross-origin"},
		{name: "cross-site order", path: "/AggregateOrders", body: `{}`, origin: attacker, site: "cross-site", wantStatus: http.StatusForbidden, wantBody: "cross-origin"},
		{name: "rebound host name", path: query, body: `{"sql":"SELECT 1"}`, host: "attacker.example", wantStatus: http.StatusForbidden, wantBody: "DNS rebinding protection; serve --host NAME"},
		{name: "reading a file through SQL", path: query, body: `{"sql":"SELECT content FROM read_text('/etc/passwd')"}`, wantStatus: http.StatusBadRequest, wantBody: "disabled by configuration"},
		{name: "listing a folder through SQL", path: query, body: `{"sql":"SELECT * FROM glob('/root/*')"}`, wantStatus: http.StatusBadRequest, wantBody: "disabled by configuration"},
		{name: "the CLI's query", path: query, body: `{"sql":"SELECT 1 AS uno"}`, wantStatus: http.StatusOK, wantBody: "uno"},
		{name: "delete every bucket", path: "/_internal/delete_all", body: "{}", origin: same, wantStatus: http.StatusNotFound},
		{name: "reseed", method: http.MethodPut, path: "/_internal/config", body: "{}", origin: same, wantStatus: http.StatusNotFound},
		{name: "list the landing bucket", method: http.MethodGet, path: "/storage/v1/b/" + localapi.LandingBucket + "/o", origin: same, wantStatus: http.StatusOK},
		{name: "bucket metadata", method: http.MethodGet, path: "/storage/v1/b/" + localapi.QuarantineBucket, origin: same, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(cmp.Or(tt.method, http.MethodPost), srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range map[string]string{"Origin": tt.origin, "Sec-Fetch-Site": tt.site} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			req.Host = cmp.Or(tt.host, req.Host)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantBody) {
				t.Fatalf("got %d %q, want %d with %q", resp.StatusCode, b, tt.wantStatus, tt.wantBody)
			}
			for k := range resp.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("answer carries %s: %q", k, resp.Header.Get(k))
				}
			}
		})
	}
	for _, b := range []string{localapi.LandingBucket, localapi.QuarantineBucket, localapi.StagingBucket} {
		resp, err := http.Get(srv.URL + "/storage/v1/b/" + b)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("after the attempts bucket %s answers %d, want 200", b, resp.StatusCode)
		}
	}
}

// TestStartRefuses: a second serve on a running one's port or data folder,
// one on a non-loopback address without AllowRemote, or one on a folder of
// the other clock, is refused with what to do (the data folder's holder
// named, not DuckDB's lock error), and releases the folder it refused.
func TestStartRefuses(t *testing.T) {
	tests := []struct {
		name, addr, dir, want string
		setup                 func(dir string) // what the folder holds before
	}{
		{name: "a non-loopback address", addr: "0.0.0.0:0", want: "--allow-remote"},
		{name: "a busy port", addr: strings.TrimPrefix(srv.URL, "http://"), want: "another `alpipe serve`"},
		{name: "the running server's data folder", addr: "127.0.0.1:0", dir: srv.data, want: "another alpipe serve (PID " + strconv.Itoa(os.Getpid()) + ") uses " + srv.data},
		// The README's order of steps ran a wall-clock serve on .local and
		// then a virtual-clock one on the same folder, whose dashboard then
		// read "-261d ago".
		{name: "a folder of the wall clock", addr: "127.0.0.1:0", setup: mark("wall"),
			want: "was written on the wall clock and this server runs on the virtual clock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := options(cmp.Or(tt.dir, t.TempDir()), t0)
			opts.Addr = tt.addr
			if tt.setup != nil {
				tt.setup(opts.DataDir)
			}
			_, err := Start(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: %v; want a refusal saying %q", err, tt.want)
			}
			if busy := (*DataDirInUseError)(nil); tt.dir != "" && (!errors.As(err, &busy) || busy.PID != os.Getpid()) {
				t.Errorf("error %#v, want a DataDirInUseError with PID %d", err, os.Getpid())
			}
			// The refusal released the folder (srv.data is the running server's).
			if lock, err := lockDataDir(opts.DataDir); err == nil {
				lock.Close()
			} else if tt.dir == "" {
				t.Errorf("folder still locked after the refusal: %v", err)
			}
		})
	}
}

// xs reads 'x' without end and without holding any: the client side of a
// huge request allocates nothing, so what the process allocates is the
// server's doing.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
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
			resp, err := http.Post(srv.URL+tt.path, "application/json", io.MultiReader(strings.NewReader(tt.prefix), io.LimitReader(xs{}, size), strings.NewReader(tt.suffix)))
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
