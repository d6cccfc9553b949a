package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/logging"
)

func runDemo(ctx context.Context, c *cmdline, stdout io.Writer) error {
	testdata := c.String("testdata", "testdata", "`FOLDER` holding exportaciones/ and the order stories")
	verbose := c.Bool("v", false, "also print the functions' structured logs")
	if err := c.parse(); err != nil {
		return err
	}
	// The first line comes at once: what follows takes some seconds, and a
	// silent terminal after a long `go run` compile looks hung.
	fmt.Fprintln(os.Stderr, "alpipe demo: starting the functions, a fake Cloud Storage, the embedded store and DuckDB in a temporary folder; then the file drops and the orders story (about 10-40 s)")
	data, err := os.MkdirTemp("", "alpipe-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	level := slog.LevelError + 4 // quiet: the demo prints its own summary
	if *verbose {
		level = slog.LevelInfo
	}
	// A virtual clock makes the orders story replay identically every time.
	clock := local.VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
	srv, err := local.Start(ctx, local.Options{Addr: "127.0.0.1:0", DataDir: data, Clock: clock, Logger: logging.New(os.Stderr, level)})
	if err != nil {
		return err
	}
	defer srv.App.Close()
	fmt.Fprintf(stdout, "alpipe demo: functions at %s, data in %s\n\n", srv.URL, data)
	if err := srv.DemoFiles(ctx, stdout, *testdata); err != nil {
		return err
	}
	return srv.DemoOrders(ctx, stdout, filepath.Join(*testdata, "pedidos", "historia.jsonl"))
}
