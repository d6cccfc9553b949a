package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/setup"
)

// cloudApp builds the production backends of the named functions from the
// environment: the same code path as the functions on Cloud Run. It first
// checks that the environment names them, and otherwise says what to set:
// the commands would fail later with an engine error.
func cloudApp(ctx context.Context, what string, names ...string) (*setup.App, error) {
	var env config.Cloud
	if err := config.Load(ctx, &env, nil); err != nil {
		return nil, fmt.Errorf("%s works on the deployed backends: set %s as the deployed functions have them (terraform output), or drop --cloud / gs:// to use a local alpipe serve", what, strings.Join(env.Missing(), ", "))
	}
	proc, err := functions.Prepare(ctx, names, setup.Options{Logger: logging.New(os.Stderr, slog.LevelWarn)})
	if err != nil {
		return nil, err
	}
	return proc.App, nil
}

// reingestBackends are, for a gs:// argument without --server, the
// environment's production backends; otherwise the server's.
func (c *cmdline) reingestBackends(ctx context.Context, gs bool) (
	objs *objects.GCS, led reingest.LedgerReader, ing reingest.Ingester, closeFn func(), err error,
) {
	if gs && !c.isSet("server") {
		app, err := cloudApp(ctx, c.Name()+" gs://...", functions.IngestCSVName)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return app.Objects, app.Ledger, reingest.Direct{Service: app.Ingest}, func() { app.Close() }, nil
	}
	objs, closeFn, err = c.srv.Storage(ctx)
	return objs, c.srv, c.srv, closeFn, err
}

func runBackfill(ctx context.Context, c *cmdline, stdout io.Writer) error {
	concurrency := c.Int("concurrency", reingest.DefaultConcurrency, "objects ingested at once")
	grace := c.Duration("grace", 30*time.Second, "after Ctrl-C, how long the objects in flight may still finish")
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	if localPath(pos[0]) {
		return c.usagef("%q is a local path, but backfill reads objects already in the landing bucket: upload the files first with alpipe drop --upload-only FILE --object exportaciones/YYYY/MM/DD/NAME, then backfill exportaciones/YYYY/MM/", pos[0])
	}
	if *concurrency < 1 {
		return c.usagef("--concurrency %d: want at least 1", *concurrency)
	}
	bucket, prefix, gs, err := reingest.ParseGS(pos[0])
	if err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	objs, led, ing, closeFn, err := c.reingestBackends(ctx, gs)
	if err != nil {
		return err
	}
	defer closeFn()
	if !gs {
		bucket = localapi.LandingBucket
	}
	b := &reingest.Backfill{Objects: objs, Ledger: led, Ingest: ing, Concurrency: *concurrency, Grace: *grace}
	if err := checkPrefix(ctx, objs, bucket, prefix); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}

	progress := reingest.NewProgressPrinter(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	b.Progress = progress.Update
	sum, err := b.Run(ctx, bucket, prefix)
	progress.Finish()
	if err != nil {
		return err
	}
	if err := report(stdout, c.format, sum, func(w io.Writer) error { return reingest.WriteSummary(w, sum) }); err != nil {
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

// localPath: object names never start with ".", "/" or "~".
func localPath(arg string) bool {
	return strings.HasPrefix(arg, ".") || strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "~")
}

// checkPrefix refuses a prefix under which the bucket holds nothing (a
// typo would otherwise report "0 objects" and exit 0), saying which top
// folders the bucket holds and which patterns the contracts load.
func checkPrefix(ctx context.Context, objs *objects.GCS, bucket, prefix string) error {
	for _, err := range objs.List(ctx, bucket, prefix) {
		if err != nil {
			return fmt.Errorf("list gs://%s/%s: %w", bucket, prefix, err)
		}
		return nil
	}
	tops := map[string]bool{}
	seen := 0
	for a, err := range objs.List(ctx, bucket, "") {
		if err != nil {
			return fmt.Errorf("list gs://%s: %w", bucket, err)
		}
		top, _, _ := strings.Cut(a.Name, "/")
		tops[top+"/"] = true
		if seen++; seen >= 10000 {
			break // enough to name the top folders of a big bucket
		}
	}
	names := slices.Sorted(maps.Keys(tops))
	holds := "nothing"
	if len(names) > 0 {
		holds = strings.Join(names, ", ")
	}
	msg := fmt.Sprintf("no object under %q in gs://%s (it holds %s)", prefix, bucket, holds)
	if feeds, err := contract.Default(); err == nil {
		msg += "; the contracts load " + patterns(feeds)
	}
	return errors.New(msg)
}

func runRequeue(ctx context.Context, c *cmdline, stdout io.Writer) error {
	file := c.String("file", "", "read the fixed rows from this local `FILE`, a copy of the quarantine file, instead of the object")
	object := c.String("object", "", "`NAME` of the new landing object (default <source>.requeue-<UTC time>.csv next to the source)")
	landing := c.String("landing", localapi.LandingBucket, "landing `BUCKET`, when the quarantine object lost its source metadata")
	declared := c.Bool("declared-header", false, "write the feed's declared header instead of the source file's")
	if err := c.parse(); err != nil {
		return err
	}
	bucket, name, gs, err := reingest.ParseGS(c.pos[0])
	if err == nil && name == "" {
		err = fmt.Errorf("%q names no object", c.pos[0])
	}
	if err != nil {
		return c.usagef("%w", err)
	}
	feeds, err := contract.Default()
	if err != nil {
		return err
	}
	objs, _, ing, closeFn, err := c.reingestBackends(ctx, gs)
	if err != nil {
		return err
	}
	defer closeFn()
	if !gs {
		bucket = localapi.QuarantineBucket
	}
	r := &reingest.Requeue{Feeds: feeds, LandingBucket: *landing, Objects: objs, Ingest: ing}
	req := reingest.RequeueRequest{Bucket: bucket, Name: name, Object: *object, DeclaredHeader: *declared}
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return fmt.Errorf("requeue: %w", err)
		}
		defer f.Close()
		req.Rows = f
	}
	res, err := r.Run(ctx, req)
	if err != nil {
		return err
	}
	return report(stdout, c.format, res, func(w io.Writer) error { reingest.WriteRequeue(w, res, bucket); return nil })
}
