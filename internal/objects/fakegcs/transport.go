package fakegcs

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// inProcess serves a handler as HTTP/1.1 over net.Pipe connections, so the
// in-process client needs no socket. Bodies stream both ways, and a
// cancelled request tears its connection, so the handler's read of the body
// fails (an aborted upload is not committed); fake-gcs-server's own
// in-process transport records answers whole and ignores cancellation.
type inProcess struct {
	server    *http.Server
	transport *http.Transport
	conns     chan net.Conn
	done      chan struct{}
	once      sync.Once
}

// inMemoryHost is never resolved; the fake puts it in resumable session
// URLs, which come back through the same transport.
const inMemoryHost = "fakegcs.in-process"

func serveInProcess(h http.Handler) *inProcess {
	p := &inProcess{conns: make(chan net.Conn), done: make(chan struct{})}
	p.server = &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	p.transport = &http.Transport{
		DialContext:         p.dial,
		MaxIdleConnsPerHost: 16,
		WriteBufferSize:     64 << 10,
		ReadBufferSize:      64 << 10,
	}
	go func() { _ = p.server.Serve(p) }()
	return p
}

func (p *inProcess) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *inProcess) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *inProcess) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *inProcess) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return inMemoryHost }

func (p *inProcess) stop() {
	p.transport.CloseIdleConnections()
	_ = p.server.Close()
}
