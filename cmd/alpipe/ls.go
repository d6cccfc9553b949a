package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
)

// runLs lists objects of the local buckets, as `gcloud storage ls -l` does:
// what landed, before asking status what became of it. The listing streams
// page by page from the server; only the rows printed are held.
func runLs(ctx context.Context, c *cmdline, stdout io.Writer) error {
	limit := c.Int("max", 1000, "list at most this many objects (0: all)")
	if err := c.parse(); err != nil {
		return err
	}
	if *limit < 0 {
		return c.usagef("--max must be 0 or more, not %d", *limit)
	}
	bucket, prefix, err := lsTarget(c.pos)
	if err != nil {
		return c.usagef("%w", err)
	}
	gcs, closeFn, err := c.srv.Storage(ctx)
	if err != nil {
		return fmt.Errorf("ls: %w", err)
	}
	defer closeFn()
	files := []objects.Attrs{}
	more := false
	for a, err := range gcs.List(ctx, bucket, prefix) {
		if err != nil {
			return fmt.Errorf("ls gs://%s/%s: %w", bucket, prefix, err)
		}
		if *limit > 0 && len(files) == *limit {
			more = true
			break
		}
		files = append(files, a)
	}
	if c.format == "json" {
		if more {
			// stdout stays one JSON document; the cut is said aside.
			fmt.Fprintf(os.Stderr, "alpipe ls: first %s only; --max 0 lists all\n", render.Counted(len(files), "object", "objects"))
		}
		return render.JSON(stdout, files)
	}
	if len(files) == 0 {
		fmt.Fprintf(stdout, "no objects under gs://%s/%s\n", bucket, prefix)
		return nil
	}
	rows := make([][]string, 0, len(files))
	for _, a := range files {
		rows = append(rows, []string{render.When(a.Created), render.Thousands(a.Size), fmt.Sprint(a.Generation), "gs://" + a.Bucket + "/" + a.Name})
	}
	if err := render.Table(stdout, []string{"created", "bytes", "generation", "object"}, rows, []render.Kind{render.Text, render.Int, render.Int, render.Text}); err != nil {
		return err
	}
	n := render.Counted(len(files), "object", "objects")
	if more {
		n = "first " + n + "; --max 0 lists all"
	}
	fmt.Fprintf(stdout, "(%s; alpipe status OBJECT tells what became of one)\n", n)
	return nil
}

// lsTarget reads PREFIX (of the landing bucket) or gs://BUCKET/PREFIX of
// one of the local buckets, refusing names the server would refuse.
func lsTarget(pos []string) (bucket, prefix string, err error) {
	bucket = localapi.LandingBucket
	if len(pos) == 1 {
		b, p, gs, err := reingest.ParseGS(pos[0])
		if err != nil {
			return "", "", err
		}
		prefix = p
		if gs {
			if err := objname.Bucket(b); err != nil {
				return "", "", err
			}
			bucket = b
		}
	}
	if err := objname.Prefix(prefix); err != nil {
		return "", "", err
	}
	return bucket, prefix, nil
}
