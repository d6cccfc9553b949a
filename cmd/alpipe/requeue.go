package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/ops"
	"github.com/alpinashop/alpipe/internal/ops/remote"
)

// runRequeue turns a fixed quarantine file into a new landing object of its
// feed and ingests it: a name in the local quarantine bucket, or
// gs://BUCKET/NAME on Cloud Storage with the environment's backends.
func runRequeue(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("requeue", flag.ContinueOnError)
	server := serverFlag(fs)
	file := fs.String("file", "", "read the fixed rows from this local copy of the quarantine file instead of the object")
	object := fs.String("object", "", "name of the new landing object (default <source>.requeue-<UTC time>.csv next to the source)")
	landing := fs.String("landing", local.LandingBucket, "landing bucket, when the quarantine object lost its source metadata")
	declared := fs.Bool("declared-header", false, "write the feed's declared header instead of the source file's")
	format := fs.String("format", "text", "output: text or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("requeue: want exactly one QUARANTINE_OBJECT (a name in the local quarantine bucket, or gs://BUCKET/NAME)")
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("requeue: --format %q: want text or json", *format)
	}
	bucket, name, gs, err := ops.ParseGS(pos[0])
	if err == nil && name == "" {
		err = fmt.Errorf("%q names no object", pos[0])
	}
	if err != nil {
		return fmt.Errorf("requeue: %w", err)
	}
	feeds, err := contract.Default()
	if err != nil {
		return err
	}
	r := &ops.Requeue{Feeds: feeds, LandingBucket: *landing}
	if gs && !flagSet(fs, "server") {
		app, svc, objs, err := cloudIngest(ctx)
		if err != nil {
			return err
		}
		defer app.Close()
		r.Objects, r.Ingest = objs, ops.Direct{Service: svc}
	} else {
		srv := remote.Server{URL: *server}
		gcs, closeFn, err := srv.Storage(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		if !gs {
			bucket = local.QuarantineBucket
		}
		r.Objects, r.Ingest = gcs, srv
	}
	req := ops.RequeueRequest{Bucket: bucket, Name: name, Object: *object, DeclaredHeader: *declared}
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
	if *format == "json" {
		return printJSON(stdout, res)
	}
	ops.WriteRequeue(stdout, res, bucket)
	return nil
}
