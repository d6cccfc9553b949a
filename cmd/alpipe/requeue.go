package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/reingest"
)

// runRequeue turns a fixed quarantine file into a new landing object of its
// feed and ingests it: a name in the local quarantine bucket, or
// gs://BUCKET/NAME on Cloud Storage with the environment's backends.
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
