// Command server is the production entry point of every alpipe function: one
// image, four Cloud Run services, each selecting its function with
// FUNCTION_TARGET (served at "/"); unset, every function is served at
// "/<Name>". It listens on PORT, on every interface on Cloud Run (K_SERVICE
// set) and on 127.0.0.1 elsewhere. It builds with CGO_ENABLED=0 and links no
// embedded engine, so it needs WAREHOUSE=bigquery.
//
// It serves with its own http.Server rather than funcframework.Start, which
// cannot shut down: on SIGTERM (Cloud Run's scale-in and deploys) it drains
// the requests in flight for SHUTDOWN_GRACE, cancels the rest so that they
// record a clean failure, closes its clients and exits 0.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
)

func main() {
	log := logging.New(os.Stdout, slog.LevelInfo)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, log); err != nil {
		log.Error("server stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	var serving config.Serving
	if err := config.Load(ctx, &serving, nil); err != nil {
		return err
	}
	proc, cfg, err := functions.PrepareTarget(ctx, setup.Options{Logger: log})
	if err != nil {
		return err
	}
	defer func() {
		if err := proc.Close(); err != nil {
			log.Warn("closing clients", "error", err.Error())
		}
	}()
	mux := http.NewServeMux()
	err = functions.Mount(mux, proc.Handlers, cfg.Target, serving.RequestTimeout(), log)
	if err != nil {
		return err
	}
	var plat functions.Platform
	if err := config.Load(ctx, &plat, nil); err != nil {
		return err
	}
	ln, err := listen(plat.Service, cfg.Port)
	if err != nil {
		return err
	}
	name := functions.TargetName(cfg.Target)
	srv := httpserve.New(mux, httpserve.Options{Grace: serving.ShutdownGrace, Logger: log, Name: name, Limits: limits(plat.Service)})
	log.Info("serving", "function", name, "addr", ln.Addr().String(), "bind", bindReason(plat.Service))
	return srv.Run(ctx, ln)
}

// listen binds every interface on Cloud Run, whose front end reaches the
// container from outside, and loopback anywhere else: on a laptop the
// server must not take events from the network it happens to be on.
func listen(service, port string) (net.Listener, error) {
	host := "127.0.0.1"
	if service != "" {
		host = ""
	}
	addr := net.JoinHostPort(host, port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

func bindReason(service string) string {
	if service != "" {
		return "every interface: on Cloud Run (K_SERVICE=" + service + ")"
	}
	return "loopback only: K_SERVICE is unset, so this is not Cloud Run"
}

// limits are httpserve's defaults, but on Cloud Run. There the front end is
// the only client: it caps the requests per instance itself
// (max_instance_request_concurrency), and it keeps idle connections to the
// container for reuse; closing one sooner than it does races a request sent
// on it, so the idle timeout outlasts Google's front-end keep-alive (600 s).
func limits(service string) httpserve.Limits {
	if service != "" {
		return httpserve.Limits{IdleTimeout: 620 * time.Second}
	}
	return httpserve.Limits{MaxConns: httpserve.DefaultMaxConns}
}
