package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
)

// runRequeue turns a fixed quarantine file into a new landing object of its
// feed and ingests it: a name in the local quarantine bucket, or
// gs://BUCKET/NAME on Cloud Storage with the environment's backends.
func runRequeue(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("requeue", flag.ContinueOnError)
	server := serverFlag(fs)
	file := fs.String("file", "", "read the fixed rows from this local copy of the quarantine file instead of the object")
	object := fs.String("object", "", "name of the new landing object (default <source>.requeue-<UTC time>.csv next to the source)")
	landing := fs.String("landing", localapi.LandingBucket, "landing bucket, when the quarantine object lost its source metadata")
	declared := fs.Bool("declared-header", false, "write the feed's declared header instead of the source file's")
	format := fs.String("format", "text", "output: text or json")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("requeue: want exactly one QUARANTINE_OBJECT (a name in the local quarantine bucket, or gs://BUCKET/NAME)")
	}
	if err := checkFormat("requeue", *format, "text", "json"); err != nil {
		return err
	}
	bucket, name, gs, err := reingest.ParseGS(pos[0])
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
	r := &reingest.Requeue{Feeds: feeds, LandingBucket: *landing}
	if gs && !flagSet(fs, "server") {
		app, svc, objs, err := cloudIngest(ctx, "requeue gs://...")
		if err != nil {
			return err
		}
		defer app.Close()
		r.Objects, r.Ingest = objs, reingest.Direct{Service: svc}
	} else {
		srv := client.Server{URL: *server}
		gcs, closeFn, err := srv.Storage(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		if !gs {
			bucket = localapi.QuarantineBucket
		}
		r.Objects, r.Ingest = gcs, srv
	}
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
	if *format == "json" {
		return render.JSON(stdout, res)
	}
	reingest.WriteRequeue(stdout, res, bucket)
	return nil
}
