package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/term"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/render"
)

func runServe(ctx context.Context, c *cmdline, stdout io.Writer) error {
	addr := c.String("addr", localapi.DefaultAddr, "listen `ADDRESS` (HOST:PORT)")
	data := c.String("data", cliEnv().DataDir, "data `FOLDER` for the embedded backends; ALPIPE_DATA_DIR sets the default")
	virtual := c.Bool("virtual-clock", false, "processing time moves only by \"alpipe tick --now T\"")
	start := c.String("start", "", "`TIME` the virtual clock starts at (RFC 3339; default now)")
	allowRemote := c.Bool("allow-remote", false, "serve clients on other machines too (needed for a non-loopback --addr); they can run any SQL and write data, and must reach this machine by a name given with --host")
	logFormat := c.String("log-format", "", "log lines on stderr: `text|json` (default text on a terminal, json otherwise, as Cloud Logging reads)")
	var hosts []string
	c.Func("host", "a further Host `NAME` (or IP) to accept besides localhost and loopback IPs, the only ones clients may use, even with --allow-remote (repeatable)",
		func(v string) error { hosts = append(hosts, v); return nil })
	if err := c.parse(); err != nil {
		return err
	}
	if *start != "" && !*virtual {
		return fmt.Errorf("serve: --start sets a virtual clock's start; add --virtual-clock (the wall clock cannot be set)")
	}
	logger, err := serveLogger(*logFormat, os.Stderr)
	if err != nil {
		return err
	}
	clk := clock.Wall()
	if *virtual {
		t := time.Now().UTC()
		if *start != "" {
			if t, err = parseTime("serve: --start", *start); err != nil {
				return err
			}
		}
		clk = clock.Virtual(t)
	}
	srv, err := local.Start(ctx, local.Options{
		Addr:        *addr,
		DataDir:     *data,
		Clock:       clk,
		Logger:      logger,
		AllowRemote: *allowRemote,
		Hosts:       hosts,
	})
	if err != nil {
		return err
	}
	if *allowRemote {
		fmt.Fprintf(os.Stderr, "WARNING: --allow-remote: anyone who reaches %s can run SQL on this warehouse and write data to it\n", srv.URL)
		if len(hosts) == 0 {
			fmt.Fprintln(os.Stderr, "WARNING: --allow-remote without --host: only localhost and loopback IPs are accepted as Host names (against DNS rebinding), so other machines are refused; add --host NAME for the name or IP they use")
		}
	}
	fmt.Fprintf(stdout, "alpipe serving at %s (data in %s)\n", srv.URL, *data)
	fmt.Fprintf(stdout, "  functions: %s/IngestCSV  %s/AggregateOrders  %s/AdvanceWatermark  %s/SweepLanding\n", srv.URL, srv.URL, srv.URL, srv.URL)
	fmt.Fprintf(stdout, "  cloud storage: STORAGE_EMULATOR_HOST=%s\n", srv.URL[len("http://"):])
	fmt.Fprintf(stdout, "  %s\n", clockBanner(clk))
	<-ctx.Done()
	return srv.Shutdown("signal received")
}

func serveLogger(format string, w *os.File) (*slog.Logger, error) {
	if format == "" {
		format = "json"
		if term.IsTerminal(int(w.Fd())) {
			format = "text"
		}
	}
	switch format {
	case "json":
		return logging.New(w, slog.LevelInfo), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: shortTime})), nil
	}
	return nil, fmt.Errorf("serve: --log-format %q: want text or json", format)
}

// shortTime prints the time of day in UTC: the date is the terminal's.
func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.String(slog.TimeKey, a.Value.Time().UTC().Format("15:04:05Z"))
	}
	return a
}

// clockBanner: on a virtual clock nothing moves until `alpipe tick --now
// T`, which surprises anyone who does not know it.
func clockBanner(c *clock.Local) string {
	if !c.Virtual() {
		return "clock: the wall clock (processing time is now)"
	}
	return "clock: virtual, at " + render.When(c.Now()) + "; it moves only with alpipe tick --now T"
}

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
	level := slog.LevelError + 4 // the demo prints its own summary
	if *verbose {
		level = slog.LevelInfo
	}
	// A virtual clock makes the orders story replay identically every time.
	clk := clock.Virtual(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
	srv, err := local.Start(ctx, local.Options{
		Addr:    "127.0.0.1:0",
		DataDir: data,
		Clock:   clk,
		Logger:  logging.New(os.Stderr, level),
	})
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
