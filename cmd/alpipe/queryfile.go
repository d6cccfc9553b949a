package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// formatOf guesses --format from --output's extension: .jsonl and .ndjson
// are jsonl, anything else csv.
func formatOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".jsonl", ".ndjson":
		return "jsonl"
	}
	return "csv"
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
	var rw *rowWriter
	_, more, err := runLimited(ctx, srv, sql, max, func(kinds []kind) warehouse.RowSink {
		rw = newRowWriter(f, format, kinds)
		return rw
	})
	if errors.Is(err, client.ErrIncomplete) {
		return fmt.Errorf("query: %w (%s not written: the rows are not the whole answer; add a LIMIT or --max-rows)", err, file)
	}
	if err != nil {
		return fmt.Errorf("query: %w", personal(err))
	}
	if err := rw.flush(); err != nil {
		return fmt.Errorf("query: write %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("query: write %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("query: write %s: %w", file, err)
	}
	// CreateTemp's 0600 is for the unfinished file; the answer is the
	// person's own file, readable as any other they write.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("query: write %s: %w", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("query: write %s: %w", file, err)
	}
	n := "1 row"
	if rw.rows != 1 {
		n = thousands(int(rw.rows)) + " rows"
	}
	fmt.Fprintf(stdout, "wrote %s to %s\n", n, file)
	if more {
		fmt.Fprintf(stdout, "(the first %s; more exist: --max-rows 0 writes all, or add LIMIT)\n", n)
	}
	return nil
}

// rowWriter is a warehouse.RowSink writing csv (a header, then the cells
// as they are) or jsonl (one object per row, keys in column order, typed
// as --format json types them). Its errors are sinkErrors: running the
// query again would not help.
type rowWriter struct {
	bw    *bufio.Writer
	csv   *csv.Writer
	kinds []kind
	cols  []string
	rows  int64
	enc   *json.Encoder
}

func newRowWriter(w io.Writer, format string, kinds []kind) *rowWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	rw := &rowWriter{bw: bw, kinds: kinds}
	if format == "csv" {
		rw.csv = csv.NewWriter(bw)
	} else {
		// As printJSON: "&" and "<" stay themselves in a data file.
		rw.enc = json.NewEncoder(bw)
		rw.enc.SetEscapeHTML(false)
	}
	return rw
}

func (rw *rowWriter) Columns(names []string) error {
	rw.cols = names
	if len(rw.kinds) != len(names) {
		rw.kinds = make([]kind, len(names))
	}
	if rw.csv != nil {
		return rw.fail(rw.csv.Write(names))
	}
	return nil
}

func (rw *rowWriter) Row(cells []string) error {
	rw.rows++
	if rw.csv != nil {
		return rw.fail(rw.csv.Write(cells))
	}
	o := make(object, len(cells))
	for i, c := range cells {
		o[i] = member{rw.cols[i], jsonValue(c, rw.kinds[i])}
	}
	return rw.fail(rw.enc.Encode(o))
}

func (rw *rowWriter) flush() error {
	if rw.csv != nil {
		rw.csv.Flush()
		if err := rw.csv.Error(); err != nil {
			return err
		}
	}
	return rw.bw.Flush()
}

func (rw *rowWriter) fail(err error) error {
	if err != nil {
		return &sinkError{err}
	}
	return nil
}
