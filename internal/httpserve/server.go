// Package httpserve serves a process's handler on one listener and stops it
// the way Cloud Run asks: on SIGTERM it stops accepting, lets the requests
// in flight finish within a grace, then cancels the ones still running so
// that they record a clean failure instead of being cut mid-write by the
// SIGKILL that follows 10 s after the SIGTERM.
//
// The functions framework cannot do this: its Start calls
// http.ListenAndServe, which has no shutdown.
package httpserve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"
)

// DefaultCutWait bounds the wait for the requests cancelled at the end of
// the grace: long enough for an ingest to write its failure to the ledger,
// short enough that grace + wait stays under Cloud Run's 10 s.
const DefaultCutWait = time.Second

type Options struct {
	Grace  time.Duration // how long requests in flight may run after shutdown begins
	Logger *slog.Logger
	Name   string // in the log lines, e.g. "IngestCSV"
	Limits Limits
}

// Server's requests share a base context that Shutdown cancels once the
// grace has run out.
type Server struct {
	http   *http.Server
	opts   Options
	cancel context.CancelFunc

	mu        sync.Mutex
	inFlight  int
	completed int // requests that returned, since start
}

func New(h http.Handler, opts Options) *Server {
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	opts.Limits = opts.Limits.withDefaults()
	base, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, cancel: cancel}
	s.http = &http.Server{
		Handler:           s.track(h),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       opts.Limits.IdleTimeout,
		WriteTimeout:      writeTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	return s
}

func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.inFlight++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.completed++
			s.mu.Unlock()
		}()
		boundBody(w, r, s.opts.Limits.BodyTimeout)
		h.ServeHTTP(w, r)
	})
}

// closeIdle closes the keep-alive connections waiting for a next request;
// net/http does that only when keep-alives are switched off.
func (s *Server) closeIdle() {
	s.http.SetKeepAlivesEnabled(false)
	s.http.SetKeepAlivesEnabled(true)
}

func (s *Server) counts() (inFlight, completed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight, s.completed
}

// Serve returns nil once Shutdown began. Call it once.
func (s *Server) Serve(ln net.Listener) error {
	if n := s.opts.Limits.MaxConns; n > 0 {
		limited := newLimitListener(ln, n, s.closeIdle)
		s.http.ConnState = limited.connState
		ln = limited
	}
	if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Run serves on ln until ctx is done (a signal), then shuts down.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	select {
	case err := <-errc:
		s.cancel()
		return err
	case <-ctx.Done():
	}
	s.Shutdown(context.Cause(ctx).Error())
	return <-errc
}

type Drain struct {
	InFlight   int           // running when shutdown began
	Drained    int           // returned within the grace
	Cut        int           // still running at the end of the grace: cancelled
	Unfinished int           // still running after the cut wait: abandoned
	Elapsed    time.Duration // from the start of the shutdown to its end
}

// Shutdown stops accepting, waits up to the grace for requests in flight,
// cancels those still running and waits up to the cut wait for them to
// return; then it closes every connection.
func (s *Server) Shutdown(reason string) Drain {
	start := time.Now()
	inFlight, before := s.counts()
	log := s.opts.Logger.With("served", s.opts.Name)
	log.Info("shutdown started: no new requests; requests in flight get the grace",
		"reason", reason, "in_flight", inFlight, "grace", s.opts.Grace.String())
	d := Drain{InFlight: inFlight}

	graceCtx, cancelGrace := context.WithTimeout(context.Background(), s.opts.Grace)
	err := s.http.Shutdown(graceCtx)
	cancelGrace()
	var atCut int
	d.Cut, atCut = s.counts()
	d.Drained = atCut - before
	if err != nil {
		// The grace ran out: cancel the requests' contexts, so that an
		// ingest writes its failure and releases its ledger lease.
		s.cancel()
		waitUntil := time.Now().Add(DefaultCutWait)
		for time.Now().Before(waitUntil) {
			if n, _ := s.counts(); n == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = s.http.Close()
		d.Unfinished, _ = s.counts()
	}
	s.cancel()
	d.Elapsed = time.Since(start)
	level := slog.LevelInfo
	if d.Cut > 0 {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "shutdown finished",
		"in_flight", d.InFlight, "drained", d.Drained, "cut", d.Cut, "unfinished", d.Unfinished,
		"elapsed_ms", d.Elapsed.Milliseconds())
	return d
}

// Recover answers 500 to a request whose handler panicked, and logs the
// panic with its stack, as the functions framework does: one bad request
// must not take down the instance and every request in flight with it.
func Recover(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own way to abort a response
			}
			log.ErrorContext(r.Context(), "handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			http.Error(w, "internal error (see the logs)", http.StatusInternalServerError)
		}()
		h.ServeHTTP(w, r)
	})
}

// Deadline bounds every request's context by d (0: no bound), as the
// functions framework does with CLOUD_RUN_TIMEOUT_SECONDS.
func Deadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Limits bound what clients can hold of a server: one client must not
// take it down. A zero duration takes its default below; every default is
// longer than the slowest legitimate request.
type Limits struct {
	// MaxConns bounds the connections served at once (0: no bound): beyond
	// it, new ones wait in the kernel's listen queue, where they cost the
	// process no descriptor, and the server closes its idle keep-alive
	// connections to make room.
	MaxConns int
	// BodyTimeout bounds reading a request's body, from the handler's start
	// to the body's end. Only the reading: once it has its body (or had
	// none, as an ingest's event), a handler may work for as long as it
	// needs. A blunt http.Server.ReadTimeout would cancel that work.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next request.
	IdleTimeout time.Duration
}

const (
	// headerTimeout bounds reading a request's header.
	headerTimeout = 10 * time.Second
	// DefaultBodyTimeout outlasts the longest streamed body a person
	// sends: an ERP export uploaded to the local fake GCS, or a replay's
	// historical orders, over a slow link.
	DefaultBodyTimeout = 10 * time.Minute
	DefaultIdleTimeout = 2 * time.Minute
	// writeTimeout bounds a request from the end of its header to the end
	// of its answer, the handler's work included: it outlasts Cloud Run's
	// longest request timeout (60 min), which no request of ours comes near.
	writeTimeout = 61 * time.Minute
	// DefaultMaxConns leaves a process with `ulimit -n 1024` room for its
	// own files (data stores, uploads in progress) besides its connections.
	DefaultMaxConns = 256
)

func (l Limits) withDefaults() Limits {
	l.BodyTimeout, l.IdleTimeout = cmp.Or(l.BodyTimeout, DefaultBodyTimeout), cmp.Or(l.IdleTimeout, DefaultIdleTimeout)
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
