package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/logging"
)

func runServe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", local.DefaultAddr, "listen address")
	data := fs.String("data", envOr("ALPIPE_DATA_DIR", ".local"), "data folder for the embedded backends (its default comes from ALPIPE_DATA_DIR when set)")
	virtual := fs.Bool("virtual-clock", false, "processing time moves only by \"alpipe tick --now T\"")
	start := fs.String("start", "", "start of the virtual clock (RFC 3339; default now)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	clock := local.WallClock()
	if *virtual {
		t := time.Now().UTC()
		if *start != "" {
			var err error
			if t, err = time.Parse(time.RFC3339, *start); err != nil {
				return fmt.Errorf("--start: %w", err)
			}
		}
		clock = local.VirtualClock(t)
	}
	srv, err := local.Start(ctx, local.Options{
		Addr: *addr, DataDir: *data, Clock: clock,
		Logger: logging.New(os.Stderr, slog.LevelInfo),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "alpipe serving at %s (data in %s)\n", srv.URL, *data)
	fmt.Fprintf(stdout, "  functions: %s/IngestCSV  %s/AggregateOrders  %s/AdvanceWatermark\n", srv.URL, srv.URL, srv.URL)
	fmt.Fprintf(stdout, "  cloud storage: STORAGE_EMULATOR_HOST=%s\n", srv.URL[len("http://"):])
	<-ctx.Done()
	return srv.App.Close()
}
