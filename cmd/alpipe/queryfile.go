package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// formatOf is the format a file's extension names: csv, jsonl, or "" for
// one the CLI does not write (.parquet would otherwise get CSV silently).
func formatOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".csv":
		return "csv"
	case ".jsonl", ".ndjson":
		return "jsonl"
	}
	return ""
}

// queryToFile streams the answer into a temporary file beside file and
// renames it over file only when the answer is whole, so that a stopped or
// cut answer (a cap, the timeout, Ctrl-C, a full disk) leaves no file and
// never a shorter one that looks complete. One row is held at a time.
func queryToFile(ctx context.Context, srv client.Server, sql string, max int, format, file string, stdout io.Writer) (err error) {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.part")
	if err != nil {
		return fmt.Errorf("query: --output: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	var rw *render.RowWriter
	more, err := srv.QueryTyped(ctx, sql, max, func(names, types []string) warehouse.RowSink {
		rw = render.NewRowWriter(f, format, render.Kinds(names, types))
		return rw
	})
	if errors.Is(err, localapi.ErrIncomplete) {
		return fmt.Errorf("query: %w (%s not written: the rows are not the whole answer; add a LIMIT or --max-rows)", err, file)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	// CreateTemp's 0600 is for the unfinished file; the answer is the
	// person's own file, readable as any other they write.
	chmod := func() error { return os.Chmod(tmp, 0o644) }
	rename := func() error { return os.Rename(tmp, file) }
	for _, step := range []func() error{rw.Flush, f.Sync, f.Close, chmod, rename} {
		if err := step(); err != nil {
			return fmt.Errorf("query: write %s: %w", file, err)
		}
	}
	n := render.Counted(int(rw.Rows()), "row", "rows")
	fmt.Fprintf(stdout, "wrote %s to %s\n", n, file)
	if more {
		fmt.Fprintf(stdout, "(the first %s; more exist: --max-rows 0 writes all, or add LIMIT)\n", n)
	}
	return nil
}
