package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
)

// ownSockets are the inodes of this process's sockets, from its file
// descriptors, to match against /proc/net/tcp's rows.
func ownSockets(t *testing.T) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc on this system: %v", err)
	}
	own := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			own[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return own
}

// listeningSockets lists the TCP sockets this process listens on, as
// host:port, from /proc/net/tcp{,6} matched to the process's file
// descriptors: what `ss -ltnp` shows for it.
func listeningSockets(t *testing.T) []string {
	t.Helper()
	own := ownSockets(t)
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue // no IPv6
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ... inode (field 9)
			if len(fields) < 10 || fields[3] != "0A" || !own[fields[9]] {
				continue
			}
			out = append(out, procAddr(fields[1]))
		}
		f.Close()
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
	s, err := Start(context.Background(), Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		Clock: VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)), Logger: logging.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServeListensOnOneSocket: a running serve adds exactly one listening
// socket to its process, --addr; the fake storage and the functions have
// none of their own. Shutdown closes it.
func TestServeListensOnOneSocket(t *testing.T) {
	before := listeningSockets(t)
	s := startOwn(t)
	added := slices.DeleteFunc(listeningSockets(t), func(a string) bool { return slices.Contains(before, a) })
	t.Logf("listening sockets added by serve: %v", added)
	want := []string{strings.TrimPrefix(s.URL, "http://")}
	if !slices.Equal(added, want) {
		t.Errorf("serve listens on %v, want exactly %v", added, want)
	}
	if err := s.Shutdown("test"); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if after := listeningSockets(t); !slices.Equal(after, before) {
		t.Errorf("after shutdown the process listens on %v, want %v", after, before)
	}
}

// TestStorageEmulatorHasNoSideRoutes: fake-gcs-server's own /_internal/
// routes are not mounted, and no answer carries a CORS grant, even to a
// request the guard lets through.
func TestStorageEmulatorHasNoSideRoutes(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		want   int
	}{
		{name: "delete every bucket", method: http.MethodPost, path: "/_internal/delete_all", want: http.StatusNotFound},
		{name: "reseed", method: http.MethodPut, path: "/_internal/config", want: http.StatusNotFound},
		{name: "list the landing bucket", method: http.MethodGet, path: "/storage/v1/b/" + localapi.LandingBucket + "/o", want: http.StatusOK},
		{name: "bucket metadata", method: http.MethodGet, path: "/storage/v1/b/" + localapi.QuarantineBucket, want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", srv.URL) // same origin: the guard lets it by
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
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
