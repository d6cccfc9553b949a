package httpserve

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what clients can hold of a server: one client must not
// take it down. A zero duration takes its default below; every default is
// longer than the slowest legitimate request.
type Limits struct {
	// MaxConns bounds the connections served at once (0: no bound): beyond
	// it, new ones wait in the kernel's listen queue, where they cost the
	// process no descriptor, and the server closes its idle keep-alive
	// connections to make room.
	MaxConns int
	// HeaderTimeout bounds reading a request's header.
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the handler's start
	// to the body's end. Only the reading: once it has its body (or had
	// none, as an ingest's event), a handler may work for as long as it
	// needs. A blunt http.Server.ReadTimeout would cancel that work.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next request.
	IdleTimeout time.Duration
	// WriteTimeout bounds a request from the end of its header to the end of
	// its answer: the handler's work included.
	WriteTimeout time.Duration
}

// The defaults.
const (
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout outlasts the longest streamed body a person
	// sends: an ERP export uploaded to the local fake GCS, or a replay's
	// historical orders, over a slow link.
	DefaultBodyTimeout = 10 * time.Minute
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultWriteTimeout outlasts Cloud Run's longest request timeout
	// (60 min), which no request of ours comes near.
	DefaultWriteTimeout = 61 * time.Minute
	// DefaultMaxConns leaves a process with `ulimit -n 1024` room for its
	// own files (data stores, uploads in progress) besides its connections.
	DefaultMaxConns = 256
)

func (l Limits) withDefaults() Limits {
	orDefault := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	orDefault(&l.HeaderTimeout, DefaultHeaderTimeout)
	orDefault(&l.BodyTimeout, DefaultBodyTimeout)
	orDefault(&l.IdleTimeout, DefaultIdleTimeout)
	orDefault(&l.WriteTimeout, DefaultWriteTimeout)
	return l
}

// boundBody gives r's body BodyTimeout to arrive, as a deadline on the
// connection's reads. At the body's end net/http lifts it (it then reads
// the connection in the background, with no deadline, to notice a client
// that hangs up; a deadline passing there would cancel the request's
// context). A body-less request has that background read running already,
// so it gets no deadline.
func boundBody(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
}

// limitListener accepts a connection only while fewer than cap(slots) are
// open; the server's ConnState hook frees a slot when one closes. Unlike
// x/net's netutil.LimitListener it hands net/http the *net.TCPConn itself,
// which keeps sendfile for downloads and CloseWrite for a clean close.
type limitListener struct {
	net.Listener
	slots chan struct{}
	// reap closes the server's idle connections; it runs every reapEvery
	// while all the slots are taken.
	reap      func()
	done      chan struct{}
	closeOnce sync.Once
}

const reapEvery = time.Second

func newLimitListener(ln net.Listener, n int, reap func()) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), reap: reap, done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	if err := l.acquire(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
	}
	return c, err
}

func (l *limitListener) acquire() error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	tick := time.NewTicker(reapEvery)
	defer tick.Stop()
	for {
		l.reap()
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-l.done:
			return net.ErrClosed
		case <-tick.C:
		}
	}
}

func (l *limitListener) release() { <-l.slots }

// connState frees a slot when a connection ends.
func (l *limitListener) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		l.release()
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}
