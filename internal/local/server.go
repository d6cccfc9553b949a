// Package local runs the whole system on a laptop: the functions through the
// functions framework, an in-process fake Cloud Storage on the same address,
// and the embedded state store and warehouse in one data folder. It also
// holds the client side the CLI uses against such a server (drop, query).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// The local buckets, named as in production.
const (
	LandingBucket    = "alpinashop-catalogo"
	QuarantineBucket = "alpinashop-cuarentena"
	StagingBucket    = "alpinashop-staging"
)

// DefaultAddr is where serve listens and where client commands look.
const DefaultAddr = "127.0.0.1:8080"

// Options configure a local server.
type Options struct {
	Addr    string // host:port; port 0 picks a free one
	DataDir string // default ./.local
	Logger  *slog.Logger
	// Env overrides configuration variables (as the process environment
	// would), e.g. {"WINDOW_SIZE": "1h"}.
	Env map[string]string
	// Clock is the processing-time clock; nil means the wall clock.
	Clock *Clock
	// AllowRemote serves clients on other machines; without it a
	// non-loopback Addr is refused (see guard).
	AllowRemote bool
	// Hosts are further Host header names to accept besides localhost and
	// loopback IPs (a name in /etc/hosts, say).
	Hosts []string
}

// Server is a running local system.
type Server struct {
	URL   string
	App   *setup.App
	Clock *Clock
	gcs   *fakegcs.Server
	data  string
	guard guard
}

// dataLock holds the data folder (lockDataDir) while the process lives. It
// is package state rather than a field of Server because a caller may drop
// the Server and block: the file's finalizer would then free the folder.
var dataLock *os.File

// Start brings up the fake GCS, the embedded backends and every function on
// opts.Addr, and returns once the server answers. The functions framework
// offers no way to stop its server, so a Server lives until the process
// exits; Start may be called once per process.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		opts.DataDir = ".local"
	}
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.Clock == nil {
		opts.Clock = WallClock()
	}
	if os.Getenv("FUNCTION_TARGET") != "" {
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
	started := false
	defer func() {
		if !started {
			_ = lock.Close()
		}
	}()
	// The public listener is taken first, so a busy port fails here instead
	// of a second server answering nothing while clients reach the first.
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (is another `alpipe serve` running there? --addr 127.0.0.1:0 picks a free port)", opts.Addr, err)
	}
	defer func() {
		if !started {
			_ = ln.Close()
		}
	}()
	addr := ln.Addr().String()
	inner, err := resolveAddr("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gcs, err := fakegcs.Start(filepath.Join(opts.DataDir, "gcs"), LandingBucket, QuarantineBucket, StagingBucket)
	if err != nil {
		return nil, fmt.Errorf("start local cloud storage: %w", err)
	}
	client, err := gcs.Client(ctx)
	if err != nil {
		return nil, fmt.Errorf("local cloud storage client: %w", err)
	}
	env := map[string]string{
		"ALPIPE_DATA_DIR":   opts.DataDir,
		"STATE_STORE":       config.Embedded,
		"WAREHOUSE":         config.DuckDB,
		"LANDING_BUCKET":    LandingBucket,
		"QUARANTINE_BUCKET": QuarantineBucket,
		"STAGING_BUCKET":    StagingBucket,
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	lookup := envconfig.MultiLookuper(envconfig.MapLookuper(env), envconfig.OsLookuper())
	app, err := functions.Prepare(ctx, "", setup.Options{
		Lookup:            lookup,
		Now:               opts.Clock.Now,
		Logger:            opts.Logger,
		EmbeddedWarehouse: duckDBOpener(lookup),
		Storage:           client,
	})
	if err != nil {
		return nil, err
	}
	g := newGuard(opts.AllowRemote, opts.Hosts)
	s := &Server{URL: "http://" + addr, App: app, Clock: opts.Clock, gcs: gcs, data: opts.DataDir, guard: g}
	dash, err := s.dashboard(ctx, lookup)
	if err != nil {
		return nil, err
	}
	if err := s.register(ctx, dash); err != nil {
		return nil, err
	}
	// The framework cannot wrap the functions' handlers, so it listens on a
	// private loopback port and everything reaches it through the guard.
	host, port, _ := net.SplitHostPort(inner)
	errc := make(chan error, 2)
	// The framework prints a "Serving function" line per registered path
	// (eight here, five of them unnamed) to stdout while it starts; the CLI
	// prints its own summary, so those lines are silenced until it answers.
	restore := silenceStdout()
	go func() { errc <- funcframework.StartHostPort(host, port) }()
	err = waitReady(ctx, "http://"+inner, errc)
	restore()
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: inner})
	proxy.FlushInterval = -1 // stream bodies both ways: drops and query results can be large
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	front := &http.Server{Handler: g.wrap(proxy), ReadHeaderTimeout: 10 * time.Second}
	go func() { errc <- front.Serve(ln) }()
	if err := waitReady(ctx, s.URL, errc); err != nil {
		return nil, err
	}
	started = true
	dataLock = lock
	return s, nil
}

// duckDBOpener opens the embedded warehouse with the dashboard view of the
// configured accumulation mode.
func duckDBOpener(lookup envconfig.Lookuper) func(context.Context, config.Backends) (setup.Warehouse, error) {
	return func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
		acc, _ := lookup.Lookup("ACCUMULATION")
		return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{
			Accumulation: strings.ToUpper(acc),
			TempDir:      filepath.Join(b.DataDir, "tmp"),
		})
	}
}

// register mounts the fake GCS and the local admin endpoints beside the
// functions, through the framework's own registry.
func (s *Server) register(ctx context.Context, dash http.Handler) error {
	for _, p := range fakegcs.Paths() {
		if err := funcframework.RegisterHTTPFunctionContext(ctx, p, s.guard.wrap(s.gcs.Handler()).ServeHTTP); err != nil {
			return fmt.Errorf("mount local cloud storage at %s: %w", p, err)
		}
	}
	if err := funcframework.RegisterHTTPFunctionContext(ctx, AdminPrefix, s.guard.wrap(s.admin()).ServeHTTP); err != nil {
		return err
	}
	// "/" is the mux's catch-all: the dashboard answers its own paths and
	// 404 for anything else, while the functions keep theirs.
	return funcframework.RegisterHTTPFunctionContext(ctx, dashboard.PagePath, s.guard.wrap(dash).ServeHTTP)
}

// dashboard builds the local page over the server's own backends.
func (s *Server) dashboard(ctx context.Context, lookup envconfig.Lookuper) (http.Handler, error) {
	var cfg config.Watermark
	if err := config.Load(ctx, &cfg, lookup); err != nil {
		return nil, err
	}
	store, err := s.App.Store(ctx, cfg.Backends) // the store already open for the functions
	if err != nil {
		return nil, err
	}
	src := dashboard.Source{
		Warehouse:   s.App.Querier(),
		Watermarks:  dashboard.StoreWatermarks{Store: store},
		Now:         s.Clock.Now,
		Aggregation: cfg.Spec().Name,
		// The fake GCS on this address answers the download links itself.
		QuarantineBucket: QuarantineBucket,
	}
	if proc, err := s.App.StreamProcessor(); err == nil {
		src.Stream = proc
	}
	if l := s.App.Ledger(); l != nil {
		src.Ledger = l
	}
	return dashboard.Handler(src), nil
}

func resolveAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	if port != "0" {
		return addr, nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(ctx context.Context, url string, errc <-chan error) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			return fmt.Errorf("serve %s: %w", url, err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url + AdminPrefix + "health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("server at %s did not become ready", url)
}

// silenceStdout points os.Stdout at the null device until the returned
// function restores it.
func silenceStdout() func() {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return func() {}
	}
	saved := os.Stdout
	os.Stdout = devnull
	return func() {
		os.Stdout = saved
		devnull.Close()
	}
}
