package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/ops"
	"github.com/alpinashop/alpipe/internal/ops/remote"
)

// runBackfill ingests every object under a prefix through the file-drop
// path: a prefix of the local server's landing bucket, or gs://BUCKET/PREFIX
// on Cloud Storage with the backends the environment names (the same
// settings the deployed IngestCSV reads).
func runBackfill(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
	server := serverFlag(fs)
	concurrency := fs.Int("concurrency", ops.DefaultConcurrency, "objects ingested at once")
	grace := fs.Duration("grace", 30*time.Second, "after Ctrl-C, how long the objects in flight may still finish")
	format := fs.String("format", "text", "summary: text or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("backfill: want exactly one PREFIX (of the local landing bucket, or gs://BUCKET/PREFIX)")
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("backfill: --format %q: want text or json", *format)
	}
	if *concurrency < 1 {
		return fmt.Errorf("backfill: --concurrency %d: want at least 1", *concurrency)
	}
	bucket, prefix, gs, err := ops.ParseGS(pos[0])
	if err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	b := &ops.Backfill{Concurrency: *concurrency, Grace: *grace}
	if gs && !flagSet(fs, "server") {
		app, svc, objs, err := cloudIngest(ctx)
		if err != nil {
			return err
		}
		defer app.Close()
		b.Objects, b.Ledger, b.Ingest = objs, app.Ledger(), ops.Direct{Service: svc}
	} else {
		srv := remote.Server{URL: *server}
		gcs, closeFn, err := srv.Storage(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		if !gs {
			bucket = local.LandingBucket
		}
		b.Objects, b.Ledger, b.Ingest = gcs, srv, srv
	}

	progress := ops.NewProgressPrinter(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	b.Progress = progress.Update
	sum, err := b.Run(ctx, bucket, prefix)
	progress.Finish()
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else if err := ops.WriteSummary(stdout, sum); err != nil {
		return err
	}
	switch {
	case sum.Interrupted:
		return errors.New("backfill interrupted: run it again to resume")
	case len(sum.Failed) > 0:
		return fmt.Errorf("backfill: %d objects failed; run it again to retry them", len(sum.Failed))
	}
	return nil
}

// flagSet reports whether the command line gave the flag, so that a
// gs:// address can mean the local server's bucket when --server is given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
