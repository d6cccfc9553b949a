// Command server is the production entry point of every alpipe function: one
// image, four Cloud Run services, each selecting its function with
// FUNCTION_TARGET (served at "/"); unset, every function is served at
// "/<Name>". It listens on PORT (default 8080), builds with CGO_ENABLED=0 and
// links no embedded engine, so it needs WAREHOUSE=bigquery (or remote).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
)

func main() {
	log := logging.New(os.Stdout, slog.LevelInfo)
	if err := run(log); err != nil {
		log.Error("server stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx := context.Background()
	var cfg config.Server
	if err := config.Load(ctx, &cfg, nil); err != nil {
		return err
	}
	opts := setup.Options{Logger: log}
	if cfg.ClockFile != "" {
		c, err := clock.NewFile(cfg.ClockFile)
		if err != nil {
			return fmt.Errorf("ALPIPE_CLOCK_FILE: %w", err)
		}
		opts.Now = c.Now
		log.Warn("test clock in use: processing time is read from a file", "file", cfg.ClockFile)
	}
	app, err := functions.Prepare(ctx, cfg.Target, opts)
	if err != nil {
		return fmt.Errorf("start %s: %w", orAll(cfg.Target), err)
	}
	defer app.Close()
	log.Info("serving", "function", orAll(cfg.Target), "port", cfg.Port)
	return funcframework.Start(cfg.Port)
}

func orAll(target string) string {
	if target == "" {
		return "all functions"
	}
	return target
}
