package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/render"
)

// serverFlag is --server of every client command; ALPIPE_SERVER sets its
// default for a shell that works with a second server.
func serverFlag(fs *flag.FlagSet) *string {
	return fs.String("server", cmp.Or(cliEnv().Server, localapi.DefaultURL), "URL of a running \"alpipe serve\" (ALPIPE_SERVER overrides the default)")
}

func runDrop(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("drop", flag.ContinueOnError)
	object := fs.String("object", "", "object name in the landing bucket (default exportaciones/<today>/<file name>)")
	format := fs.String("format", "text", "output: text or json")
	uploadOnly := fs.Bool("upload-only", false, "only upload the file (no finalize event): stage history for \"alpipe backfill\"")
	server := serverFlag(fs)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	name, _, err := fileTarget("drop", pos, *object, *format)
	if err != nil {
		return err
	}
	srv := client.Server{URL: *server}
	if *uploadOnly {
		attrs, err := srv.Upload(ctx, localapi.LandingBucket, name, pos[0])
		if err != nil {
			return err
		}
		if *format == "json" {
			return render.JSON(stdout, attrs)
		}
		fmt.Fprintf(stdout, "uploaded gs://%s/%s generation %d (not ingested)\n", attrs.Bucket, attrs.Name, attrs.Generation)
		return nil
	}
	rec, err := srv.Drop(ctx, name, pos[0])
	if err != nil {
		return err
	}
	if *format == "json" {
		return render.JSON(stdout, rec)
	}
	printRecord(stdout, rec)
	return nil
}

// fileTarget checks the arguments of a command that takes one FILE (drop,
// validate) before any other work, and returns the object name the file
// would land as and the contract that name falls under.
func fileTarget(cmd string, pos []string, object, format string) (string, *contract.Feed, error) {
	if len(pos) != 1 {
		return "", nil, fmt.Errorf("%s: want exactly one FILE (alpipe %s --help)", cmd, cmd)
	}
	if err := checkFormat(cmd, format, "text", "json"); err != nil {
		return "", nil, err
	}
	if err := checkFile(pos[0]); err != nil {
		return "", nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if object == "" {
		object = client.DefaultObject(pos[0], time.Now().UTC())
	}
	// Before any upload: the server would refuse the name, or worse, store
	// it and then fail to deliver its event (a newline cannot travel in the
	// event's headers).
	if err := objname.Local(object); err != nil {
		return "", nil, fmt.Errorf("%s: --object: %w", cmd, err)
	}
	feed, err := feedFor(object)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return object, feed, nil
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
		out = append(out, fmt.Sprintf("%s %s", f.Name(), feedPattern(f)))
	}
	return strings.Join(out, " or ")
}

func checkFormat(cmd, got string, want ...string) error {
	for _, w := range want {
		if got == w {
			return nil
		}
	}
	return fmt.Errorf("%s: --format %q: want %s", cmd, got, strings.Join(want, " or "))
}
