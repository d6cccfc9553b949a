package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
)

func runDrop(ctx context.Context, c *cmdline, stdout io.Writer) error {
	object := c.String("object", "", "the landing object `NAME`, or gs://"+localapi.LandingBucket+"/NAME (default exportaciones/<today>/<file name>)")
	uploadOnly := c.Bool("upload-only", false, "only upload the file (no finalize event): stage history for \"alpipe backfill\"")
	if err := c.parse(); err != nil {
		return err
	}
	name, _, err := fileTarget(c, *object)
	if err != nil {
		return err
	}
	if *uploadOnly {
		attrs, err := c.srv.Upload(ctx, localapi.LandingBucket, name, c.pos[0])
		if err != nil {
			return err
		}
		return report(stdout, c.format, attrs, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "uploaded gs://%s/%s generation %d (not ingested)\n", attrs.Bucket, attrs.Name, attrs.Generation)
			return err
		})
	}
	rec, err := c.srv.Drop(ctx, name, c.pos[0])
	if err != nil {
		return err
	}
	if err := report(stdout, c.format, rec, func(w io.Writer) error { printRecord(w, rec); return nil }); err != nil {
		return err
	}
	return loadedInFull(rec)
}

// loadedInFull is drop's exit status: a script (or a person) must not read
// success when rows went to quarantine or the file was refused.
func loadedInFull(rec ledger.Record) error {
	switch {
	case rec.State == ledger.Duplicate, rec.State == ledger.Done && rec.Counts.Quarantined == 0:
		return nil
	case rec.State == ledger.Done:
		return fmt.Errorf("drop: %s of %s rows quarantined", render.Thousands(rec.Counts.Quarantined), render.Thousands(rec.Counts.Read))
	}
	msg := fmt.Sprintf("drop: gs://%s/%s was %s", rec.Key.Bucket, rec.Key.Object, rec.State)
	if rec.Reason != "" {
		msg += ": " + rec.Reason
	}
	return errors.New(msg)
}

// fileTarget checks the FILE of drop or validate and --object before any
// other work, and returns the object name the file would land as and the
// contract that name falls under.
func fileTarget(c *cmdline, object string) (string, *contract.Feed, error) {
	if err := checkFile(c.pos[0]); err != nil {
		return "", nil, fmt.Errorf("%s: %w", c.Name(), err)
	}
	if object == "" {
		object = client.DefaultObject(c.pos[0], time.Now().UTC())
	}
	bucket, name, gs, err := reingest.ParseGS(object)
	if err == nil && gs && bucket != localapi.LandingBucket {
		return "", nil, c.usagef("--object %q: files land only in gs://%s", object, localapi.LandingBucket)
	}
	// Before any upload: the server would refuse the name, or worse, store
	// it and then fail to deliver its event (a newline cannot travel in the
	// event's headers).
	if err == nil {
		err = objname.Local(name)
	}
	if err != nil {
		return "", nil, c.usagef("--object: %w", err)
	}
	feed, err := feedFor(name)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", c.Name(), err)
	}
	return name, feed, nil
}

// checkFile refuses a path that is not a readable regular file before any
// network call, with the reason in the user's terms.
func checkFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a folder: give one file", path)
	}
	return nil
}

// feedFor returns the contract an object name falls under, or says which
// patterns exist: an object no contract owns would only be SKIPPED.
func feedFor(object string) (*contract.Feed, error) {
	feeds, err := contract.Default()
	if err != nil {
		return nil, err
	}
	if f, ok := feeds.Match(object); ok {
		return f, nil
	}
	return nil, fmt.Errorf("object %q matches no contract, so it would be skipped; give --object a name matching %s (alpipe contracts)", object, patterns(feeds))
}

// patterns names every feed with its object pattern, for error messages.
func patterns(feeds *contract.Registry) string {
	var out []string
	for _, f := range feeds.Feeds() {
		out = append(out, fmt.Sprintf("%s %s", f.Name(), f.ObjectPattern()))
	}
	return strings.Join(out, " or ")
}
