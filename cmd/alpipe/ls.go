package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
)

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
	files, more, err := listObjects(ctx, c.srv, bucket, prefix, *limit)
	if err != nil {
		return fmt.Errorf("ls: %w", err)
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

// lsTarget refuses names the server would refuse.
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

// runQuarantine reads rejected rows without curl and URL-quoting.
func runQuarantine(ctx context.Context, c *cmdline, stdout io.Writer) error {
	out := c.outputFlag("get: write the file to `FILE` (a .csv; default stdout)")
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	switch {
	case len(pos) == 0:
		return c.usagef("want ls [PREFIX] or get OBJECT (alpipe quarantine --help)")
	case pos[0] == "ls" || pos[0] == "list":
		if len(pos) > 2 {
			return c.usagef("ls: want at most one PREFIX")
		}
		prefix := ""
		if len(pos) == 2 {
			prefix = pos[1]
		}
		if err := objname.Prefix(prefix); err != nil {
			return c.usagef("ls: %w", err)
		}
		return quarantineList(ctx, c.srv, prefix, c.format, stdout)
	case pos[0] == "get" || pos[0] == "cat":
		if len(pos) != 2 {
			return c.usagef("get: want exactly one OBJECT (alpipe quarantine ls lists them)")
		}
		if *out != "" && *out != "-" && formatOf(*out) != "csv" {
			return c.usagef("--output %s: want a file ending in .csv (a quarantine file is CSV)", *out)
		}
		return quarantineGet(ctx, c.srv, pos[1], *out, stdout)
	}
	return c.usagef("unknown subcommand %q: want ls or get", pos[0])
}

func quarantineList(ctx context.Context, srv client.Server, prefix, format string, stdout io.Writer) error {
	files, _, err := listObjects(ctx, srv, localapi.QuarantineBucket, prefix, 0)
	if err != nil {
		return fmt.Errorf("quarantine ls: %w", err)
	}
	if format == "json" {
		return render.JSON(stdout, files)
	}
	if len(files) == 0 {
		fmt.Fprintf(stdout, "no quarantine files under gs://%s/%s\n", localapi.QuarantineBucket, prefix)
		return nil
	}
	rows := make([][]string, 0, len(files))
	for _, a := range files {
		rows = append(rows, []string{render.When(a.Created), render.Thousands(a.Size), a.Name})
	}
	if err := render.Table(stdout, []string{"created", "bytes", "object"}, rows, []render.Kind{render.Text, render.Int, render.Text}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(%s; alpipe quarantine get OBJECT fetches one)\n", render.Counted(len(files), "file", "files"))
	return nil
}

func quarantineGet(ctx context.Context, srv client.Server, arg, out string, stdout io.Writer) error {
	bucket, name, err := quarantineObject(arg)
	if err != nil {
		return fmt.Errorf("quarantine get: %w", err)
	}
	gcs, closeFn, err := srv.Storage(ctx)
	if err != nil {
		return fmt.Errorf("quarantine get: %w", err)
	}
	defer closeFn()
	r, err := gcs.Open(ctx, bucket, name, 0)
	if errors.Is(err, objects.ErrNotFound) {
		return fmt.Errorf("quarantine get: no object %q in gs://%s (alpipe quarantine ls lists them)", name, bucket)
	}
	if err != nil {
		return fmt.Errorf("quarantine get: %w", err)
	}
	defer r.Close()
	if out == "" || out == "-" {
		_, err := io.Copy(stdout, r)
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("quarantine get: %w", err)
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("quarantine get: write %s: %w", out, err)
	}
	fmt.Fprintf(stdout, "wrote %s (%s bytes)\n", out, render.Thousands(n))
	return nil
}

// quarantineObject refuses anything but an object of the quarantine
// bucket: another bucket, or a name such as "../alpinashop-catalogo/x" that
// would leave it on a server that maps names to files.
func quarantineObject(arg string) (bucket, name string, err error) {
	bucket, name, gs, err := reingest.ParseGS(arg)
	if err != nil {
		return "", "", err
	}
	if gs && bucket != localapi.QuarantineBucket {
		return "", "", fmt.Errorf("%q is not in the quarantine bucket: quarantine get reads only gs://%s", arg, localapi.QuarantineBucket)
	}
	if err := objname.Local(name); err != nil {
		return "", "", err
	}
	return localapi.QuarantineBucket, name, nil
}

// listObjects lists at most limit objects (0: all) and says whether more exist.
func listObjects(ctx context.Context, srv client.Server, bucket, prefix string, limit int) ([]objects.Attrs, bool, error) {
	gcs, closeFn, err := srv.Storage(ctx)
	if err != nil {
		return nil, false, err
	}
	defer closeFn()
	files := []objects.Attrs{}
	for a, err := range gcs.List(ctx, bucket, prefix) {
		if err != nil {
			return nil, false, fmt.Errorf("gs://%s/%s: %w", bucket, prefix, err)
		}
		if limit > 0 && len(files) == limit {
			return files, true, nil
		}
		files = append(files, a)
	}
	return files, false, nil
}
