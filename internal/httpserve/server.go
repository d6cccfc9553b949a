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
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultCutWait bounds how long Shutdown waits, after cancelling the
// requests still running at the end of the grace, for them to return: long
// enough for an ingest to write its failure to the ledger, short enough that
// grace + wait stays under Cloud Run's 10 s.
const DefaultCutWait = time.Second

// Options configure a Server.
type Options struct {
	// Grace is how long requests in flight may run after shutdown begins.
	Grace time.Duration
	// CutWait bounds the wait for cancelled requests (default DefaultCutWait).
	CutWait time.Duration
	// Logger receives the shutdown's start and end.
	Logger *slog.Logger
	// Name says what is served, in the log lines (e.g. "IngestCSV").
	Name string
	// Limits bound what clients can hold of the server (limits.go).
	Limits Limits
}

// Server is one http.Server whose requests share a base context that
// Shutdown cancels once the grace has run out.
type Server struct {
	http   *http.Server
	opts   Options
	cancel context.CancelFunc

	mu        sync.Mutex
	inFlight  int
	completed int // requests that returned, since start
}

// New wraps h; nothing listens until Serve.
func New(h http.Handler, opts Options) *Server {
	if opts.CutWait <= 0 {
		opts.CutWait = DefaultCutWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Limits = opts.Limits.withDefaults()
	base, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, cancel: cancel}
	s.http = &http.Server{
		Handler:           s.track(h),
		ReadHeaderTimeout: opts.Limits.HeaderTimeout,
		IdleTimeout:       opts.Limits.IdleTimeout,
		WriteTimeout:      opts.Limits.WriteTimeout,
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

// Serve accepts on ln until Shutdown; it returns nil once Shutdown began.
// Call it once.
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

// Run serves on ln until ctx is done (a signal), then shuts down. It
// returns the serve error if serving failed first.
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

// Drain is what a shutdown did with the requests it found.
type Drain struct {
	InFlight   int           // running when shutdown began
	Drained    int           // returned within the grace
	Cut        int           // still running at the end of the grace: cancelled
	Unfinished int           // still running after the cut wait: abandoned
	Elapsed    time.Duration // from the start of the shutdown to its end
}

// Shutdown stops accepting, waits up to the grace for requests in flight,
// cancels those still running and waits up to the cut wait for them to
// return; then it closes every connection. It logs its start and end.
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
		waitUntil := time.Now().Add(s.opts.CutWait)
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
