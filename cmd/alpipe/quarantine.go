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

// runQuarantine lists and fetches quarantine files through the server's
// fake Cloud Storage, so that reading rejected rows needs no curl and no
// URL-quoting.
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
	gcs, closeFn, err := srv.Storage(ctx)
	if err != nil {
		return fmt.Errorf("quarantine ls: %w", err)
	}
	defer closeFn()
	var files []objects.Attrs
	for a, err := range gcs.List(ctx, localapi.QuarantineBucket, prefix) {
		if err != nil {
			return fmt.Errorf("quarantine ls: %w", err)
		}
		files = append(files, a)
	}
	if format == "json" {
		return render.JSON(stdout, files) // nil is [] there
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

// quarantineObject reads OBJECT or gs://BUCKET/OBJECT and refuses anything
// but an object of the quarantine bucket: another bucket, or a name such as
// "../alpinashop-catalogo/x" that would leave it on a server that maps
// names to files.
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
