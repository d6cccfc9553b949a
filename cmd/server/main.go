// Command server is the production entry point of every alpipe function: one
// image, three Cloud Run services, each selecting its function with
// FUNCTION_TARGET (served at "/"); unset, every function is served at
// "/<Name>". It listens on PORT (default 8080), builds with CGO_ENABLED=0 and
// links no embedded engine, so it needs WAREHOUSE=bigquery.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/alpinashop/alpipe/functions"
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
	target := os.Getenv("FUNCTION_TARGET")
	app, err := functions.Prepare(ctx, target, setup.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("start %s: %w", orAll(target), err)
	}
	defer app.Close()
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	log.Info("serving", "function", orAll(target), "port", port)
	return funcframework.Start(port)
}

func orAll(target string) string {
	if target == "" {
		return "all functions"
	}
	return target
}
