// Package local runs the whole system on a laptop behind one door: one TCP
// listener whose every route (the functions, an in-process fake Cloud
// Storage, the local endpoints and the dashboard) sits on one mux behind the
// guard, and the embedded state store and warehouse in one data folder.
// Its routes and names are package localapi's; the CLI and the demo reach
// it through package client.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// Options configure a local server.
type Options struct {
	Addr    string // host:port; port 0 picks a free one
	DataDir string // default ./.local
	Logger  *slog.Logger
	// Env overrides configuration variables (as the process environment
	// would), e.g. {"BATCH_WAIT": "0s"}.
	Env map[string]string
	// Clock is the processing-time clock; nil means the wall clock.
	Clock *Clock
	// AllowRemote serves clients on other machines; without it a
	// non-loopback Addr is refused (see guard).
	AllowRemote bool
	// Hosts are further Host header names to accept besides localhost and
	// loopback IPs (a name in /etc/hosts, say).
	Hosts []string
	// Limits bound what clients can hold (httpserve's defaults for zero
	// fields; MaxConns 0 is httpserve.DefaultMaxConns).
	Limits httpserve.Limits
}

// Server is a running local system.
type Server struct {
	URL    string
	App    *setup.App
	Clock  *Clock
	gcs    *fakegcs.Server
	data   string
	guard  guard
	http   *httpserve.Server
	served chan error // Serve's result, once it returned
	lock   *os.File   // the data folder's lock, released by Shutdown
	// monitor keeps the samples of the dashboard's monitoring panel.
	monitor *dashboard.Monitor
}

// dataLock holds the data folder (lockDataDir) while the process lives. It
// is package state rather than a field of Server because a caller may drop
// the Server and block: the file's finalizer would then free the folder.
var dataLock *os.File

// Start brings up the fake GCS, the embedded backends and every function on
// opts.Addr, the only socket it opens: the in-process storage client reaches
// the fake through memory, not through a port of its own. Shutdown stops it.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		opts.DataDir = ".local"
	}
	if opts.Addr == "" {
		opts.Addr = localapi.DefaultAddr
	}
	if opts.Clock == nil {
		opts.Clock = WallClock()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The dashboard's monitoring panel reads the lines the functions log,
	// as the log-based metrics do in production.
	monitor := dashboard.NewMonitor(opts.Clock.Now)
	opts.Logger = slog.New(monitor.Handler(opts.Logger.Handler()))
	var process config.Server
	if err := config.Load(ctx, &process, nil); err != nil {
		return nil, err
	}
	if process.Target != "" {
		return nil, errors.New("FUNCTION_TARGET is set: unset it to serve every function locally (or run cmd/server for one)")
	}
	if !isLoopbackAddr(opts.Addr) && !opts.AllowRemote {
		return nil, fmt.Errorf("refusing to serve on %s: it is not a loopback address, and the server runs any SQL it is sent; serve on 127.0.0.1, or pass --allow-remote to expose it to the network", opts.Addr)
	}
	// The data folder is claimed before anything opens a file in it.
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
	maps.Copy(env, opts.Env)
	lookup := envconfig.MultiLookuper(envconfig.MapLookuper(env), envconfig.OsLookuper())
	var wm config.Watermark
	if err := config.Load(ctx, &wm, lookup); err != nil {
		return nil, err
	}
	var serving config.Serving
	if err := config.Load(ctx, &serving, lookup); err != nil {
		return nil, err
	}
	proc, err := functions.Prepare(ctx, nil, setup.Options{
		Lookup: lookup,
		Now:    opts.Clock.Now,
		Logger: opts.Logger,
		// Each view in its aggregation's declared mode (internal/aggregation).
		EmbeddedWarehouse: duckDBOpener(""),
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
		guard: newGuard(opts.AllowRemote, opts.Hosts), served: make(chan error, 1), lock: lock, monitor: monitor}
	dash, err := s.dashboard(ctx, wm)
	if err != nil {
		return nil, err
	}
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
	mux.Handle(dashboard.PagePath, dash)
	limits := opts.Limits
	if limits.MaxConns == 0 {
		limits.MaxConns = httpserve.DefaultMaxConns
	}
	s.http = httpserve.New(s.guard.wrap(noCORS(mux)), httpserve.Options{Grace: serving.ShutdownGrace, Logger: opts.Logger, Name: "alpipe serve", Limits: limits})
	go func() { s.served <- s.http.Serve(ln) }()
	started = true
	dataLock = lock
	return s, nil
}

// Shutdown drains the requests in flight (SHUTDOWN_GRACE, then cancels
// them), then closes the backends and the fake storage. reason is logged.
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

// Unwrap lets http.ResponseController reach the connection (flushes of
// streamed answers).
func (c corsFilter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Flush keeps streamed answers streaming through the filter.
func (c corsFilter) Flush() {
	c.strip()
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// duckDBOpener opens the embedded warehouse with the dashboard view of the
// configured accumulation mode.
func duckDBOpener(accumulation string) func(context.Context, config.Backends) (setup.Warehouse, error) {
	return func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
		return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{
			Accumulation: strings.ToUpper(accumulation),
			TempDir:      filepath.Join(b.DataDir, "tmp"),
		})
	}
}

// dashboardRefresh is the page's period over the warehouse WAREHOUSE
// selects: BigQuery bills every refresh (two queries of at least 10 MB
// each), so the page over it keeps dashboard.DefaultRefresh (5 minutes,
// panes change at most once a minute); the embedded one costs nothing,
// and the page follows a demo every 5 s.
func dashboardRefresh(warehouse string) time.Duration {
	if warehouse == config.BigQuery {
		return dashboard.DefaultRefresh
	}
	return dashboard.LocalRefresh
}

// dashboard builds the local page over the server's own backends.
func (s *Server) dashboard(ctx context.Context, cfg config.Watermark) (http.Handler, error) {
	src := dashboard.Source{
		Warehouse:  s.App.Warehouse,
		Watermarks: dashboard.StoreWatermarks{Store: s.App.Store}, // the store already open for the functions
		Now:        s.Clock.Now,
		// The fake GCS on this address answers the download links itself.
		QuarantineBucket: localapi.QuarantineBucket,
		Refresh:          dashboardRefresh(cfg.Warehouse),
		Monitor:          s.monitor,
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
	return dashboard.Handler(src), nil
}
