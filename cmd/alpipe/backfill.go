package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
)

// runBackfill ingests every object under a prefix through the file-drop
// path: a prefix of the local server's landing bucket, or gs://BUCKET/PREFIX
// on Cloud Storage with the backends the environment names (the same
// settings the deployed IngestCSV reads).
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

// localPath reports whether a backfill argument names a file or folder on
// this machine: object names never start with "." or "/".
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
	var names []string
	for t := range tops {
		names = append(names, t)
	}
	sort.Strings(names)
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
