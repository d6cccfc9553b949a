// Command functions serves alpipe's functions through the Functions
// Framework for Go, as Cloud Run functions does when it builds this
// repository from source: the registrations are package alpipe's, at the
// module root, and funcframework serves the one FUNCTION_TARGET names at
// "/" (every function at "/<Name>" when it is unset).
//
//	FUNCTION_TARGET=IngestCSV LOCAL_ONLY=true go run ./cmd/functions
//
// Unlike the buildpack's generated main, it prepares the functions before
// serving, so that a bad configuration stops it at start, as it stops
// cmd/server. Unlike cmd/server, it cannot drain: funcframework's server
// has no shutdown, so SIGTERM kills the requests in flight. cmd/server
// stays the production entry point. Like cmd/server it builds with
// CGO_ENABLED=0 and links no embedded engine, and it listens on 127.0.0.1
// unless K_SERVICE is set (Cloud Run) and LOCAL_ONLY is not "true".
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
	var plat platform
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

// platform is what the entry reads of where it runs: Cloud Run sets
// K_SERVICE; LOCAL_ONLY is the functions framework's own switch to
// loopback.
type platform struct {
	Service   string `env:"K_SERVICE"`
	LocalOnly bool   `env:"LOCAL_ONLY"`
}

func (platform) Validate() error { return nil }

// bindHost is every interface on Cloud Run, whose front end reaches the
// container from outside, and loopback anywhere else or with
// LOCAL_ONLY=true: on a laptop the server must not take events from the
// network it happens to be on.
func bindHost(p platform) string {
	if p.Service != "" && !p.LocalOnly {
		return ""
	}
	return "127.0.0.1"
}
