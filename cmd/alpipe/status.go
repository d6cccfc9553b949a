package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/ops"
	"github.com/alpinashop/alpipe/internal/ops/remote"
	"github.com/alpinashop/alpipe/internal/setup"
)

// runStatus answers the morning questions: did last night's files load, how
// many rows were rejected and why, and is the real-time view keeping up.
func runStatus(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	server := serverFlag(fs)
	format := fs.String("format", "text", "output: text or json")
	since := fs.Duration("since", ops.DefaultSince, "how far back files and discarded orders count")
	files := fs.Int("files", 50, "files listed, newest first")
	cloud := fs.Bool("cloud", false, "read the backends the environment names (as the deployed functions do) instead of a local server")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("status: unexpected argument %q", pos[0])
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("status: --format %q: want text or json", *format)
	}
	if *since <= 0 || *files <= 0 {
		return fmt.Errorf("status: --since and --files must be positive")
	}
	var rep ops.Report
	if *cloud {
		app, err := setup.FromEnv(ctx, []string{"IngestCSV", "AdvanceWatermark"}, setup.Options{Logger: logging.New(os.Stderr, slog.LevelWarn)})
		if err != nil {
			return err
		}
		defer app.Close()
		rep = ops.BuildReport(ctx, app.StatusSources(), ops.StatusOptions{Since: *since, MaxFiles: *files})
	} else if rep, err = (remote.Server{URL: *server}).Status(ctx, *since, *files); err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, rep)
	}
	return ops.WriteStatus(stdout, rep)
}
