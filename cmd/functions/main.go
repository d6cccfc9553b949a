// Command functions serves alpipe's functions through the Functions
// Framework for Go, as Cloud Run functions does when it builds this
// repository from source (package alpipe's registrations):
//
//	FUNCTION_TARGET=IngestCSV LOCAL_ONLY=true go run ./cmd/functions
//
// Unlike the buildpack's generated main, it prepares the functions before
// serving, so that a bad configuration stops it at start. Unlike
// cmd/server, which stays the production entry point, it cannot drain:
// funcframework's server has no shutdown, so SIGTERM kills the requests in
// flight. It builds with CGO_ENABLED=0 and links no embedded engine.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	alpipe "github.com/alpinashop/alpipe"
	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
)

func main() {
	log := logging.New(os.Stdout, slog.LevelInfo)
	if err := run(context.Background(), log); err != nil {
		log.Error("functions framework stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	var plat functions.Platform
	if err := config.Load(ctx, &plat, nil); err != nil {
		return err
	}
	_, cfg, err := alpipe.Functions.Prepare(ctx, setup.Options{Logger: log})
	if err != nil {
		return err
	}
	host := bindHost(plat)
	log.Info("serving through the functions framework (no drain on SIGTERM)",
		"function", functions.TargetName(cfg.Target), "host", host, "port", cfg.Port)
	return funcframework.StartHostPort(host, cfg.Port)
}

// bindHost is every interface on Cloud Run, whose front end reaches the
// container from outside, and loopback anywhere else or with
// LOCAL_ONLY=true: on a laptop the server must not take events from the
// network it happens to be on.
func bindHost(p functions.Platform) string {
	if p.Service != "" && !p.LocalOnly {
		return ""
	}
	return "127.0.0.1"
}
