package local

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/localapi"
)

// ownTCP lists the local ends, as host:port, of this process's TCP sockets
// in state st ("0A" listening, "01" established), from /proc/net/tcp{,6}
// matched to the process's file descriptors: what `ss -tnp` shows for it.
func ownTCP(t *testing.T, st string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	own := map[string]bool{}
	for _, fd := range fds {
		link, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			own[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue // no IPv6
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			f := strings.Fields(line)
			// sl local_address rem_address st ... inode (field 9)
			if len(f) >= 10 && f[3] == st && own[f[9]] {
				out = append(out, procAddr(f[1]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// procAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080"
// (IPv4; an IPv6 address is shown in the table's own hex).
func procAddr(hex string) string {
	ip, port, _ := strings.Cut(hex, ":")
	p, _ := strconv.ParseUint(port, 16, 16)
	if len(ip) == 8 {
		v, _ := strconv.ParseUint(ip, 16, 32)
		ip = fmt.Sprintf("%d.%d.%d.%d", byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return ip + ":" + strconv.FormatUint(p, 10)
}

func startOwn(t *testing.T) *Server {
	t.Helper()
	s, err := Start(context.Background(), options(t.TempDir(), t0))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServeListensOnOneSocket: a running serve adds exactly one listening
// socket to its process, --addr; the fake storage and the functions have
// none of their own. Shutdown closes it.
func TestServeListensOnOneSocket(t *testing.T) {
	before := ownTCP(t, "0A")
	s := startOwn(t)
	added := slices.DeleteFunc(ownTCP(t, "0A"), func(a string) bool { return slices.Contains(before, a) })
	t.Logf("listening sockets added by serve: %v", added)
	want := []string{strings.TrimPrefix(s.URL, "http://")}
	if !slices.Equal(added, want) {
		t.Errorf("serve listens on %v, want exactly %v", added, want)
	}
	if err := s.Shutdown("test"); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if after := ownTCP(t, "0A"); !slices.Equal(after, before) {
		t.Errorf("after shutdown the process listens on %v, want %v", after, before)
	}
}

// TestServeBoundsConnections: the local server holds at most its limit of
// connections while it keeps answering everyone (1,100 idle connections
// under `ulimit -n 1024` ended in `accept4: too many open files` and a dead
// server). The idle and body timeouts are httpserve's, proven there; this
// proves serve hands its Limits over.
func TestServeBoundsConnections(t *testing.T) {
	const limit, clients = 4, 12
	opts := options(t.TempDir(), t0)
	opts.Limits = httpserve.Limits{MaxConns: limit, IdleTimeout: 400 * time.Millisecond, BodyTimeout: 300 * time.Millisecond}
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown("test done") })
	addr := strings.TrimPrefix(s.URL, "http://")
	errs := make(chan error, clients)
	for range clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			// Each client keeps its connection open after its answer; the
			// deadline stands for a client's patience.
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			_, err := io.WriteString(c, "GET "+localapi.HealthPath+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
			resp, rerr := http.ReadResponse(bufio.NewReader(c), nil)
			if err = cmp.Or(err, rerr); err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
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
	if n := len(slices.DeleteFunc(ownTCP(t, "01"), func(a string) bool { return a != addr })); n > limit {
		t.Errorf("the server holds %d connections, want at most %d", n, limit)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(s.URL + localapi.HealthPath)
	if err != nil {
		t.Fatalf("a new client while %d connections are open: %v", clients, err)
	}
	resp.Body.Close()
}
