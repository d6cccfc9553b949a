package local

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/localapi"
)

func TestGuardRefuse(t *testing.T) {
	tests := []struct {
		name        string
		allowRemote bool
		hosts       []string
		remote      string
		host        string
		header      map[string]string
		want        string // "" = served
	}{
		{name: "the CLI", remote: "127.0.0.1:5000", host: "127.0.0.1:8080"},
		{name: "localhost by name over IPv6", remote: "[::1]:5000", host: "localhost:8080"},
		{name: "the dashboard's own fetch", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}},
		{name: "typed in the address bar", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Sec-Fetch-Site": "none"}},
		{name: "another machine", remote: "192.0.2.7:5000", host: "127.0.0.1:8080", want: "not on this machine"},
		{name: "another machine, allowed", allowRemote: true, hosts: []string{"laptop.lan"}, remote: "192.0.2.7:5000", host: "laptop.lan:8080"},
		{name: "another machine by a listed IP", allowRemote: true, hosts: []string{"192.0.2.1"}, remote: "192.0.2.7:5000", host: "192.0.2.1:8080"},
		{name: "DNS rebinding with --allow-remote", allowRemote: true, hosts: []string{"laptop.lan"}, remote: "127.0.0.1:5000", host: "attacker.example:8080", want: "DNS rebinding"},
		{name: "an unlisted name with --allow-remote", allowRemote: true, remote: "192.0.2.7:5000", host: "laptop.lan:8080", want: "DNS rebinding"},
		{name: "loopback name with --allow-remote", allowRemote: true, remote: "127.0.0.1:5000", host: "localhost:8080"},
		{name: "DNS rebinding", remote: "127.0.0.1:5000", host: "attacker.example:8080", want: "DNS rebinding"},
		{name: "a listed host name", hosts: []string{"Alpipe.Test"}, remote: "127.0.0.1:5000", host: "alpipe.test:8080"},
		{name: "cross-site form post", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Origin": "https://attacker.example"}, want: "cross-origin"},
		{name: "other port is another origin", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Origin": "http://127.0.0.1:3000"}, want: "cross-origin"},
		{name: "sandboxed page", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Origin": "null"}, want: "opaque origin"},
		{name: "cross-site no-cors fetch without Origin", remote: "127.0.0.1:5000", host: "127.0.0.1:8080", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: "cross-site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard(tt.allowRemote, tt.hosts)
			r := httptest.NewRequest(http.MethodPost, "http://"+tt.host+localapi.QueryPath, nil)
			r.RemoteAddr = tt.remote
			r.Host = tt.host
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			got := g.refuse(r)
			if tt.want == "" && got != "" {
				t.Fatalf("refused: %s", got)
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("refusal %q does not say %q", got, tt.want)
			}
		})
	}
}

// TestServerRefusesTheAttacks sends the attacks to the running
// server: each must be refused while the CLI's own requests still work.
// fake-gcs-server's own /_internal/ routes are not mounted, and no answer
// carries a CORS grant, even to a request the guard lets through.
func TestServerRefusesTheAttacks(t *testing.T) {
	same := map[string]string{"Origin": srv.URL} // the guard lets it by
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		wantStatus               int
		wantBody                 string
	}{
		{name: "cross-site replay writes no pane", path: localapi.Prefix + "replay", body: `{}`, header: map[string]string{"Origin": "https://attacker.example"}, wantStatus: http.StatusForbidden, wantBody: "cross-origin"},
		{name: "cross-site order", path: "/AggregateOrders", body: `{}`, header: map[string]string{"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"}, wantStatus: http.StatusForbidden, wantBody: "cross-origin"},
		{name: "rebound host name", path: localapi.Prefix + "query", body: `{"sql":"SELECT 1"}`, header: map[string]string{"Host": "attacker.example"}, wantStatus: http.StatusForbidden, wantBody: "DNS rebinding"},
		{name: "reading a file through SQL", path: localapi.Prefix + "query", body: `{"sql":"SELECT content FROM read_text('/etc/passwd')"}`, wantStatus: http.StatusBadRequest, wantBody: "disabled by configuration"},
		{name: "listing a folder through SQL", path: localapi.Prefix + "query", body: `{"sql":"SELECT * FROM glob('/root/*')"}`, wantStatus: http.StatusBadRequest, wantBody: "disabled by configuration"},
		{name: "the CLI's query", path: localapi.Prefix + "query", body: `{"sql":"SELECT 1 AS uno"}`, wantStatus: http.StatusOK, wantBody: "uno"},
		{name: "delete every bucket", path: "/_internal/delete_all", body: "{}", header: same, wantStatus: http.StatusNotFound},
		{name: "reseed", method: http.MethodPut, path: "/_internal/config", body: "{}", header: same, wantStatus: http.StatusNotFound},
		{name: "list the landing bucket", method: http.MethodGet, path: "/storage/v1/b/" + localapi.LandingBucket + "/o", header: same, wantStatus: http.StatusOK},
		{name: "bucket metadata", method: http.MethodGet, path: "/storage/v1/b/" + localapi.QuarantineBucket, header: same, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(cmp.Or(tt.method, http.MethodPost), srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
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

func TestNonLoopbackAddressNeedsAllowRemote(t *testing.T) {
	_, err := Start(context.Background(), Options{Addr: "0.0.0.0:0", DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("Start on 0.0.0.0 without AllowRemote: %v; want a refusal naming --allow-remote", err)
	}
}

func TestBusyPortIsRefused(t *testing.T) {
	_, err := Start(context.Background(), Options{Addr: strings.TrimPrefix(srv.URL, "http://"), DataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "another `alpipe serve`") {
		t.Fatalf("Start on a busy port: %v; want a refusal", err)
	}
}

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
