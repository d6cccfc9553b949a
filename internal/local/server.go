// Package local runs the whole system on a laptop behind one door: one TCP
// listener whose every route sits on one mux behind the guard, and the
// embedded state store and warehouse in one data folder.
package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/replay"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

type Options struct {
	Addr        string // port 0 picks a free one
	DataDir     string // default ./.local
	Logger      *slog.Logger
	Clock       *clock.Local     // nil: the wall clock
	AllowRemote bool             // without it a non-loopback Addr is refused (see httpserve.Guard)
	Hosts       []string         // Host names to accept besides localhost and loopback IPs
	Limits      httpserve.Limits // MaxConns 0 is httpserve.DefaultMaxConns
}

type Server struct {
	URL     string
	App     *setup.App
	Clock   *clock.Local
	gcs     *fakegcs.Server
	data    string
	http    *httpserve.Server
	served  chan error
	lock    *os.File
	monitor *dashboard.Monitor
}

// dataLock holds the data folder (lockDataDir) while the process lives. It
// is package state rather than a field of Server because a caller may drop
// the Server and block: the file's finalizer would then free the folder.
var dataLock *os.File

// Start serves on opts.Addr, the only socket it opens: the in-process
// storage client reaches the fake GCS through memory.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts.DataDir = cmp.Or(opts.DataDir, ".local")
	opts.Addr = cmp.Or(opts.Addr, localapi.DefaultAddr)
	opts.Clock = cmp.Or(opts.Clock, clock.Wall())
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	opts.Limits.MaxConns = cmp.Or(opts.Limits.MaxConns, httpserve.DefaultMaxConns)
	// The monitoring panel reads the functions' log lines, as the log-based
	// metrics do in production.
	monitor := dashboard.NewMonitor(opts.Clock.Now)
	opts.Logger = slog.New(monitor.Handler(opts.Logger.Handler()))
	var process config.Server
	if err := config.Load(ctx, &process, nil); err != nil {
		return nil, err
	}
	if process.Target != "" {
		return nil, errors.New("FUNCTION_TARGET is set: unset it to serve every function locally (or run cmd/server for one)")
	}
	if !httpserve.IsLoopback(opts.Addr) && !opts.AllowRemote {
		return nil, fmt.Errorf("refusing to serve on %s: it is not a loopback address, and the server runs any SQL it is sent; serve on 127.0.0.1, or pass --allow-remote to expose it to the network", opts.Addr)
	}
	lock, err := lockDataDir(opts.DataDir)
	if err != nil {
		return nil, err
	}
	// One clock per folder: ages and "last 24h" never mix two timelines.
	if err := claimClock(opts.DataDir, opts.Clock); err != nil {
		_ = lock.Close()
		return nil, err
	}
	var closers []func()
	started := false
	defer func() {
		if !started {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
			_ = lock.Close()
		}
	}()
	// The listener is taken first, so a busy port fails here instead of a
	// second server answering nothing while clients reach the first.
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (is another `alpipe serve` running there? --addr 127.0.0.1:0 picks a free port)", opts.Addr, err)
	}
	closers = append(closers, func() { _ = ln.Close() })
	gcs, err := fakegcs.Start(filepath.Join(opts.DataDir, "gcs"), localapi.LandingBucket, localapi.QuarantineBucket, localapi.StagingBucket)
	if err != nil {
		return nil, fmt.Errorf("start local cloud storage: %w", err)
	}
	closers = append(closers, gcs.Close)
	client, err := gcs.Client(ctx)
	if err != nil {
		return nil, fmt.Errorf("local cloud storage client: %w", err)
	}
	env := map[string]string{
		"ALPIPE_DATA_DIR":   opts.DataDir,
		"STATE_STORE":       config.Embedded,
		"WAREHOUSE":         config.DuckDB,
		"LANDING_BUCKET":    localapi.LandingBucket,
		"QUARANTINE_BUCKET": localapi.QuarantineBucket,
		"STAGING_BUCKET":    localapi.StagingBucket,
	}
	lookup := envconfig.MultiLookuper(envconfig.MapLookuper(env), envconfig.OsLookuper())
	var wm config.Watermark
	var serving config.Serving
	if err := errors.Join(config.Load(ctx, &wm, lookup), config.Load(ctx, &serving, lookup)); err != nil {
		return nil, err
	}
	proc, err := functions.Prepare(ctx, nil, setup.Options{
		Lookup:            lookup,
		Now:               opts.Clock.Now,
		Logger:            opts.Logger,
		EmbeddedWarehouse: openDuckDB,
		Storage:           client,
	})
	if err != nil {
		return nil, err
	}
	closers = append(closers, func() { _ = proc.Close() })
	// Holding the data folder's lock proves every lease in it belongs to a
	// serve that is gone: release them now instead of waiting LEDGER_LEASE.
	if err := releaseDeadLeases(ctx, proc.App.Ledger, opts.Clock.Now(), opts.Logger); err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), App: proc.App, Clock: opts.Clock, gcs: gcs, data: opts.DataDir,
		served: make(chan error, 1), lock: lock, monitor: monitor}
	mux := http.NewServeMux()
	for _, p := range fakegcs.Paths() {
		mux.Handle(p, s.gcs.Handler())
	}
	if err := functions.Mount(mux, proc.Handlers, "", serving.RequestTimeout(), opts.Logger); err != nil {
		return nil, err
	}
	mux.Handle(localapi.Prefix, s.admin())
	// "/" is the mux's catch-all: the dashboard answers its own paths and
	// 404 for anything else, such as the fake's /_internal/ routes, which
	// are not mounted.
	mux.Handle(dashboard.PagePath, s.dashboard(wm))
	const name = "alpipe serve"
	guard := httpserve.Guard{AllowRemote: opts.AllowRemote, Hosts: opts.Hosts,
		RemoteHint: "serve --allow-remote serves the network", HostHint: "serve --host NAME allows another name"}
	s.http = httpserve.New(guard.Wrap(name, noCORS(mux)), httpserve.Options{
		Grace:  serving.ShutdownGrace,
		Logger: opts.Logger,
		Name:   name,
		Limits: opts.Limits,
	})
	go func() { s.served <- s.http.Serve(ln) }()
	started = true
	dataLock = lock
	return s, nil
}

// Shutdown drains the requests in flight (SHUTDOWN_GRACE, then cancels
// them), then closes the backends.
func (s *Server) Shutdown(reason string) error {
	s.http.Shutdown(reason)
	err := errors.Join(<-s.served, s.App.Close())
	s.gcs.Close()
	if dataLock == s.lock {
		dataLock = nil
	}
	return errors.Join(err, s.lock.Close())
}

// noCORS drops every Access-Control-* header a handler sets:
// fake-gcs-server allows any origin with credentials, and no page of
// another origin may read what this server answers.
func noCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(corsFilter{ResponseWriter: w}, r)
	})
}

type corsFilter struct{ http.ResponseWriter }

func (c corsFilter) strip() {
	h := c.ResponseWriter.Header()
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
}

func (c corsFilter) WriteHeader(code int) {
	c.strip()
	c.ResponseWriter.WriteHeader(code)
}

func (c corsFilter) Write(b []byte) (int, error) {
	c.strip()
	return c.ResponseWriter.Write(b)
}

// Unwrap and Flush keep streamed answers streaming through the filter.
func (c corsFilter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c corsFilter) Flush() {
	c.strip()
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// openDuckDB leaves each view in its aggregation's declared mode.
func openDuckDB(_ context.Context, b config.Backends) (setup.Warehouse, error) {
	return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{TempDir: filepath.Join(b.DataDir, "tmp")})
}

func (s *Server) dashboard(cfg config.Watermark) http.Handler {
	src := dashboard.Source{
		Warehouse:  s.App.Warehouse,
		Watermarks: dashboard.StoreWatermarks{Store: s.App.Store}, // the store already open for the functions
		Now:        s.Clock.Now,
		// The fake GCS on this address answers the download links itself.
		QuarantineBucket: localapi.QuarantineBucket,
		// serve's warehouse is always the embedded one, which bills nothing
		// per query: the page follows a demo every 5 s.
		Refresh: dashboard.LocalRefresh,
		Monitor: s.monitor,
	}
	// The page offers every running aggregation's view and opens on the
	// first (ventas_hora_pais unless AGGREGATIONS leaves it out).
	for _, spec := range cfg.Specs() {
		src.Aggregations = append(src.Aggregations, spec.Name)
	}
	if len(src.Aggregations) > 0 && !slices.Contains(src.Aggregations, dashboard.DefaultAggregation) {
		src.Aggregation = src.Aggregations[0]
	}
	if proc := s.App.Stream; proc != nil {
		src.Stream = proc
	}
	if l := s.App.Ledger; l != nil {
		src.Ledger = l
	}
	return dashboard.Handler(src)
}

// maxAdminBody bounds the body of an admin request that is decoded whole:
// a query's SQL is a few KB, and a 50 MB body cost the server over a GB of
// allocations (the JSON decoder's buffer, the string, DuckDB's parse and
// the echo in its answer).
const maxAdminBody = 1 << 20

func (s *Server) admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+localapi.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("POST "+localapi.QueryPath, s.queryHandler())
	mux.HandleFunc("GET "+localapi.LedgerPath, s.handleLedger)
	mux.HandleFunc("POST "+localapi.ClockPath, s.handleClock)
	mux.Handle("GET "+localapi.StatusPath, status.Handler(s.App.StatusSources()))
	if h := s.replayHandler(); h != nil {
		mux.Handle("POST "+localapi.ReplayPath, h)
	}
	return boundBodies(mux)
}

// boundBodies spares the route that streams its own body, a replay's JSONL.
func boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != localapi.ReplayPath {
			r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) replayHandler() http.Handler {
	proc := s.App.Stream
	if proc == nil || s.App.Warehouse == nil {
		return nil
	}
	return replay.NewHandler(s.App.Warehouse, replay.Options{
		Specs:     proc.Specs(),
		IsCountry: contract.IsCountry,
		TempDir:   filepath.Join(s.data, "tmp"),
		Now:       s.Clock.Now,
		Log:       s.App.Log,
	})
}

// queryHandler: with invalid caps the server still starts (the functions
// need none of them) but refuses every query, rather than answer without
// bounds.
func (s *Server) queryHandler() *queryHandler {
	h := newQueryHandler(s.App.Querier, s.App.Log)
	if err := config.Load(context.Background(), &h.caps, s.App.Lookup); err != nil {
		h.capsErr = err
		h.log.Error("local queries are refused until the configuration is fixed", "error", err)
	}
	return h
}

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	l := s.App.Ledger
	if l == nil {
		http.Error(w, "no ledger is open", http.StatusServiceUnavailable)
		return
	}
	key, one, err := localapi.LedgerKey(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !one {
		recs, err := l.List(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, recs)
		return
	}
	rec, ok, err := l.Get(r.Context(), key)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !ok:
		http.Error(w, "no ledger record for that generation", http.StatusNotFound)
	default:
		writeJSON(w, rec)
	}
}

func (s *Server) handleClock(w http.ResponseWriter, r *http.Request) {
	if !s.Clock.Virtual() {
		http.Error(w, "this server runs on the wall clock; start it with serve --virtual-clock", http.StatusConflict)
		return
	}
	t, err := localapi.ClockTime(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.Clock.Set(t); err != nil {
		http.Error(w, fmt.Sprintf("set the virtual clock: %v", err), http.StatusInternalServerError)
		return
	}
	writeJSON(w, localapi.ClockAnswer{Now: s.Clock.Now()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
