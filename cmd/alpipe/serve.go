package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
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
	allowRemote := fs.Bool("allow-remote", false, "serve clients on other machines too (needed for a non-loopback --addr); they can run any SQL and write data")
	var hosts stringList
	fs.Var(&hosts, "host", "a further Host name to accept besides localhost and loopback IPs (repeatable)")
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
		Logger:      logging.New(os.Stderr, slog.LevelInfo),
		AllowRemote: *allowRemote, Hosts: hosts,
	})
	if err != nil {
		return err
	}
	if *allowRemote {
		fmt.Fprintf(os.Stderr, "WARNING: --allow-remote: anyone who reaches %s can run SQL on this warehouse and write data to it\n", srv.URL)
	}
	fmt.Fprintf(stdout, "alpipe serving at %s (data in %s)\n", srv.URL, *data)
	fmt.Fprintf(stdout, "  functions: %s/IngestCSV  %s/AggregateOrders  %s/AdvanceWatermark\n", srv.URL, srv.URL, srv.URL)
	fmt.Fprintf(stdout, "  cloud storage: STORAGE_EMULATOR_HOST=%s\n", srv.URL[len("http://"):])
	<-ctx.Done()
	return srv.App.Close()
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
