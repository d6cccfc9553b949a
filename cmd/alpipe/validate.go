package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// validation is what `alpipe validate` found: the verdict IngestCSV would
// reach on the rows, without a server, a load or a quarantine file.
type validation struct {
	File       string           `json:"file"`
	Object     string           `json:"object"`
	Feed       string           `json:"feed"`
	Table      string           `json:"table"`
	FileReason string           `json:"file_reason,omitempty"` // the whole file would be rejected
	Read       int64            `json:"rows_read"`
	Valid      int64            `json:"rows_valid"`
	Rejected   int64            `json:"rows_rejected"`
	Rejects    map[string]int64 `json:"rejects"`
	Examples   []rejectedRow    `json:"examples"`
}

type rejectedRow struct {
	Line   int    `json:"line"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

func runValidate(_ context.Context, c *cmdline, stdout io.Writer) error {
	object := c.String("object", "", "the object `NAME` the file would land as, which picks the contract (default exportaciones/<today>/<file name>)")
	show := c.Int("show", 10, "rejected rows shown as examples")
	if err := c.parse(); err != nil {
		return err
	}
	name, feed, err := fileTarget(c, *object)
	if err != nil {
		return err
	}
	v, err := validateFile(c.pos[0], name, feed, *show)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	if c.format == "json" {
		err = render.JSON(stdout, v)
	} else {
		err = v.writeText(stdout)
	}
	if err != nil {
		return err
	}
	switch {
	case v.FileReason != "":
		return fmt.Errorf("validate: %s would be rejected whole: %s", c.pos[0], v.FileReason)
	case v.Rejected > 0:
		return fmt.Errorf("validate: %s of %s rows would be quarantined", render.Thousands(v.Rejected), render.Thousands(v.Read))
	}
	return nil
}

// validateFile reads path as IngestCSV reads the object it would become:
// the same decoding (gzip by its magic bytes, the zip-bomb bound), the same
// binary sniff, the same whole-file reasons.
func validateFile(path, object string, feed *contract.Feed, show int) (*validation, error) {
	v := &validation{File: path, Object: object, Feed: feed.Name(), Table: feed.Table(), Rejects: map[string]int64{}, Examples: []rejectedRow{}}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// stop ends the file: rejected as a whole when the decoding says so
	// (corrupt gzip, a zip bomb: where IngestCSV rejects it), else failed.
	stop := func(what string, err error) (*validation, error) {
		if reason, ok := ingest.Rejection(err); ok {
			v.FileReason = reason
			return v, nil
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	body, err := ingest.Decode(f, object, info.Size(), 0)
	if err != nil {
		return stop("decode", err)
	}
	peek := bufio.NewReaderSize(body, ingest.BinarySniff)
	head, err := peek.Peek(ingest.BinarySniff)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return stop("read", err)
	}
	if reason := ingest.BinaryReason(head); reason != "" {
		v.FileReason = reason
		return v, nil
	}
	r := record.NewReader(peek, record.Options{Comma: feed.SniffDelimiter(head), Quote: feed.Quote()})
	header, err := r.Next()
	switch {
	case errors.Is(err, io.EOF):
		v.FileReason = "empty object: no header row"
		return v, nil
	case err != nil:
		return stop("read header", err)
	case header.Problem != "":
		v.FileReason = "unreadable header: " + header.Problem
		return v, nil
	}
	binding, err := feed.Bind(header.Fields)
	var fileErr *contract.FileError
	if errors.As(err, &fileErr) {
		v.FileReason = fileErr.Reason
	} else if err != nil {
		return nil, fmt.Errorf("bind header: %w", err)
	}
	row := make([]warehouse.Value, feed.Width())
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return stop(fmt.Sprintf("read line %d", rec.Line), err)
		}
		v.Read++
		var rej contract.Reject
		switch {
		case rec.Problem != "":
			rej = contract.Unreadable(rec.Problem)
		case binding == nil:
			rej = contract.Reject{Code: "file_rejected", Detail: "file rejected: " + v.FileReason}
		default:
			rej = binding.Validate(rec.Fields, row)
		}
		if rej.OK() {
			v.Valid++
			continue
		}
		v.Rejected++
		v.Rejects[rej.Code]++
		if len(v.Examples) < show {
			v.Examples = append(v.Examples, rejectedRow{Line: rec.Line, Code: rej.Code, Detail: rej.Detail})
		}
	}
	return v, nil
}

func (v *validation) writeText(w io.Writer) error {
	fmt.Fprintf(w, "%s as %s\n  feed: %s  table: %s\n", v.File, v.Object, v.Feed, v.Table)
	if v.FileReason != "" {
		fmt.Fprintf(w, "  FILE REJECTED: %s\n", v.FileReason)
	}
	fmt.Fprintf(w, "  rows read/valid/rejected: %s/%s/%s\n", render.Thousands(v.Read), render.Thousands(v.Valid), render.Thousands(v.Rejected))
	if len(v.Rejects) > 0 {
		codes := slices.Collect(maps.Keys(v.Rejects)) // the most rows first
		slices.SortFunc(codes, func(a, b string) int { return cmp.Or(cmp.Compare(v.Rejects[b], v.Rejects[a]), strings.Compare(a, b)) })
		rows := make([][]string, 0, len(codes))
		for _, c := range codes {
			rows = append(rows, []string{c, render.Thousands(v.Rejects[c])})
		}
		fmt.Fprintln(w)
		if err := render.Table(w, []string{"reject", "rows"}, rows, []render.Kind{render.Text, render.Int}); err != nil {
			return err
		}
	}
	if len(v.Examples) > 0 {
		fmt.Fprintln(w)
		rows := make([][]string, 0, len(v.Examples))
		for _, e := range v.Examples {
			rows = append(rows, []string{render.Thousands(e.Line), e.Code, e.Detail})
		}
		if err := render.Table(w, []string{"line", "reject", "detail"}, rows, []render.Kind{render.Int, render.Text, render.Text}); err != nil {
			return err
		}
	}
	if v.FileReason == "" && v.Rejected == 0 {
		fmt.Fprintln(w, "  every row is valid")
	}
	return nil
}
