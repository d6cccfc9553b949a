package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
)

func serverFlag(fs *flag.FlagSet) *string {
	return fs.String("server", "http://"+local.DefaultAddr, "URL of a running \"alpipe serve\"")
}

func runDrop(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("drop", flag.ContinueOnError)
	object := fs.String("object", "", "object name in the landing bucket (default exportaciones/<today>/<file name>)")
	format := fs.String("format", "text", "output: text or json")
	uploadOnly := fs.Bool("upload-only", false, "only upload the file (no finalize event): stage history for \"alpipe backfill\"")
	server := serverFlag(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("drop: want exactly one FILE")
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("drop: --format %q: want text or json", *format)
	}
	name := *object
	if name == "" {
		name = local.DefaultObject(pos[0], time.Now().UTC())
	}
	if *uploadOnly {
		attrs, err := local.Upload(ctx, *server, local.LandingBucket, name, pos[0])
		if err != nil {
			return err
		}
		if *format == "json" {
			return printJSON(stdout, attrs)
		}
		fmt.Fprintf(stdout, "uploaded gs://%s/%s generation %d (not ingested)\n", attrs.Bucket, attrs.Name, attrs.Generation)
		return nil
	}
	rec, err := local.Drop(ctx, *server, name, pos[0])
	if err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, rec)
	}
	local.PrintRecord(stdout, rec)
	return nil
}
