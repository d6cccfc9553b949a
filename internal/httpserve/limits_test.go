package httpserve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// counting is the raw listener under the server's own: it counts the
// connections the server holds open, which the client side cannot see.
type counting struct {
	net.Listener
	mu         sync.Mutex
	open, peak int
}

func (c *counting) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.open++
	c.peak = max(c.peak, c.open)
	c.mu.Unlock()
	return &countedConn{Conn: conn, l: c}, nil
}

type countedConn struct {
	net.Conn
	l    *counting
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// serve serves h with opts on a free loopback port, counting the
// connections the server holds open; the test's end shuts it down.
func serve(t *testing.T, h http.Handler, opts Options) (*Server, *counting, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &counting{Listener: ln}
	s := New(h, opts)
	go func() { _ = s.Serve(cl) }()
	t.Cleanup(func() { s.Shutdown("test done") })
	return s, cl, ln.Addr().String()
}

// dial connects to addr; the test's end closes the connection.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// exchange sends one keep-alive request on conn and reads its answer.
func exchange(conn net.Conn, br *bufio.Reader, request string) (int, error) {
	if _, err := io.WriteString(conn, request); err != nil {
		return 0, err
	}
	return readAnswer(conn, br)
}

// readAnswer reads the next answer on conn, waiting at most 3 s for it.
func readAnswer(conn net.Conn, br *bufio.Reader) (int, error) {
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitClosed reports how long the server took to close conn, or an error
// if it did not within limit.
func waitClosed(conn net.Conn, br *bufio.Reader, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	_, err := br.ReadByte()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), err != nil && strings.Contains(err.Error(), "reset"):
		return time.Since(start), nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("the connection is still open after %s", limit)
	case err != nil:
		return 0, err
	}
	return 0, errors.New("the server sent a byte nobody asked for")
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

const getRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

// TestIdleConnectionIsClosed: a keep-alive connection that sends nothing
// after its answer is closed after the idle timeout; it used to be held
// for as long as the client liked (500 of them for 150 s in the issue).
func TestIdleConnectionIsClosed(t *testing.T) {
	const idle = 200 * time.Millisecond
	_, _, addr := serve(t, http.HandlerFunc(ok), Options{Grace: time.Second, Limits: Limits{IdleTimeout: idle}})
	conn, br := dial(t, addr)
	if code, err := exchange(conn, br, getRequest); err != nil || code != http.StatusOK {
		t.Fatalf("first request: %d, %v", code, err)
	}
	took, err := waitClosed(conn, br, 2*time.Second)
	if err != nil {
		t.Fatalf("idle connection: %v, want it closed after %s", err, idle)
	}
	if took < idle/2 {
		t.Errorf("closed after %s, before the idle timeout %s", took, idle)
	}
	t.Logf("idle connection closed after %s", took)
}

// TestBodyTimeout: the time to read a request's body is bounded, while a
// handler that has read its body (or had none: an ingest's event) may run
// far longer; a blunt ReadTimeout would cancel its context.
func TestBodyTimeout(t *testing.T) {
	const bodyTimeout = 300 * time.Millisecond
	tests := []struct {
		name     string
		request  string // sent, then the client stalls
		work     time.Duration
		wantCut  bool // the handler's body read fails and the connection is closed
		wantCode int
	}{
		{name: "a stalled body is cut",
			request: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nten bytes.", wantCut: true},
		{name: "a stalled chunked body is cut",
			request: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", wantCut: true},
		{name: "a handler that read its body works past the timeout",
			request: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello", work: 2 * bodyTimeout, wantCode: http.StatusOK},
		{name: "a handler that read its chunked body works past the timeout",
			request: "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", work: 2 * bodyTimeout, wantCode: http.StatusOK},
		{name: "a body-less request works past the timeout",
			request: getRequest, work: 2 * bodyTimeout, wantCode: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				readErr   error
				cancelled bool
			}
			done := make(chan result, 1)
			_, _, addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					done <- result{readErr: err}
					http.Error(w, err.Error(), http.StatusRequestTimeout)
					return
				}
				select {
				case <-time.After(tt.work):
					done <- result{}
				case <-r.Context().Done():
					done <- result{cancelled: true}
				}
				ok(w, r)
			}), Options{Grace: time.Second, Limits: Limits{BodyTimeout: bodyTimeout}})
			conn, br := dial(t, addr)
			start := time.Now()
			if _, err := io.WriteString(conn, tt.request); err != nil {
				t.Fatal(err)
			}
			var got result
			select {
			case got = <-done:
			case <-time.After(2 * time.Second):
				t.Fatalf("the handler still reads its body after 2 s, want it cut after %s", bodyTimeout)
			}
			t.Logf("handler returned after %s: %+v", time.Since(start), got)
			if got.cancelled {
				t.Fatal("the handler's context was cancelled while it worked, its body read (or none sent)")
			}
			if tt.wantCut {
				if got.readErr == nil {
					t.Fatal("the stalled body read ended without an error")
				}
				_, _ = readAnswer(conn, br) // the handler's answer, if it reaches the client, is the last
				if _, err := waitClosed(conn, br, 2*time.Second); err != nil {
					t.Errorf("connection after a cut body: %v", err)
				}
				return
			}
			if got.readErr != nil {
				t.Fatalf("body read: %v", got.readErr)
			}
			if code, err := readAnswer(conn, br); err != nil || code != tt.wantCode {
				t.Errorf("status %d (%v), want %d", code, err, tt.wantCode)
			}
		})
	}
}

// TestConnectionsBeyondTheLimit: the server holds at most MaxConns
// connections (the 1,100 idle ones exhausted its descriptors and
// killed it), and still answers everyone: when all its connections are
// taken, it closes the idle ones to make room.
func TestConnectionsBeyondTheLimit(t *testing.T) {
	const limit, clients = 4, 12
	_, cl, addr := serve(t, http.HandlerFunc(ok), Options{Grace: time.Second, Limits: Limits{MaxConns: limit, IdleTimeout: time.Minute}})
	codes := make(chan error, clients)
	for range clients {
		conn, br := dial(t, addr)
		go func() {
			// Each client keeps its connection open after its answer.
			code, err := exchange(conn, br, getRequest)
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("status %d", code)
			}
			codes <- err
		}()
	}
	for range clients {
		if err := <-codes; err != nil {
			t.Errorf("a client beyond the limit: %v", err)
		}
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a new client while %d connections are open: %v", clients, err)
	}
	resp.Body.Close()
	cl.mu.Lock()
	open, peak := cl.open, cl.peak
	cl.mu.Unlock()
	t.Logf("server side: %d connections open, at most %d at once, for %d clients", open, peak, clients+1)
	if peak > limit {
		t.Errorf("the server held %d connections at once, want at most %d", peak, limit)
	}
}
