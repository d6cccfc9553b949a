package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/logging"
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
