package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestServeBoundsConnections: the local server holds at most its limit of
// connections while it keeps answering everyone (1,100 idle connections
// under `ulimit -n 1024` ended in `accept4: too many open files` and a dead
// server). The idle and body timeouts are httpserve's, proven there; this
// proves serve hands its Limits over.
func TestServeBoundsConnections(t *testing.T) {
	const limit, clients = 4, 12
	s, err := Start(context.Background(), Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		Clock: VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)), Logger: logging.Discard(),
		Limits: httpserve.Limits{MaxConns: limit, IdleTimeout: 400 * time.Millisecond, BodyTimeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown("test done") })
	addr := strings.TrimPrefix(s.URL, "http://")
	health := "GET " + localapi.HealthPath + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"

	dial := func(t *testing.T) (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	// answer reads one answer; the deadline stands for a client's patience.
	answer := func(c net.Conn, br *bufio.Reader) (int, error) {
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	t.Run("more clients than the limit are all answered", func(t *testing.T) {
		errs := make(chan error, clients)
		for range clients {
			c, br := dial(t)
			go func() {
				// Each client keeps its connection open after its answer.
				if _, err := io.WriteString(c, health); err != nil {
					errs <- err
					return
				}
				code, err := answer(c, br)
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("status %d", code)
				}
				errs <- err
			}()
		}
		for range clients {
			if err := <-errs; err != nil {
				t.Errorf("a client: %v", err)
			}
		}
		// Only an accepted connection has a descriptor: one the kernel
		// completed and the server has not accepted is not counted.
		accepted := slices.DeleteFunc(ownTCP(t, "01"), func(a string) bool { return a != addr })
		if n := len(accepted); n > limit {
			t.Errorf("the server holds %d connections, want at most %d", n, limit)
		}
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(s.URL + localapi.HealthPath)
		if err != nil {
			t.Fatalf("a new client while %d connections are open: %v", clients, err)
		}
		resp.Body.Close()
	})
}
