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
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
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

// loadedInFull is drop's exit status: a script must not read success when
// rows went to quarantine or the file was refused.
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

// fileTarget checks FILE and --object before any request, and returns the
// object name the file would land as and its contract.
func fileTarget(c *cmdline, object string) (string, *contract.Feed, error) {
	if err := checkFile(c.pos[0]); err != nil {
		return "", nil, fmt.Errorf("%s: %w", c.Name(), err)
	}
	object = cmp.Or(object, client.DefaultObject(c.pos[0], time.Now().UTC()))
	bucket, name, gs, err := reingest.ParseGS(object)
	if err == nil && gs && bucket != localapi.LandingBucket {
		return "", nil, c.usagef("--object %q: files land only in gs://%s", object, localapi.LandingBucket)
	}
	// The server would store a name with a newline, then fail to deliver
	// its event: a newline cannot travel in the event's headers.
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

// feedFor refuses an object no contract owns: it would only be SKIPPED.
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

func patterns(feeds *contract.Registry) string {
	var out []string
	for _, f := range feeds.Feeds() {
		out = append(out, fmt.Sprintf("%s %s", f.Name(), f.ObjectPattern()))
	}
	return strings.Join(out, " or ")
}

// printRecord names the quarantine file in the form quarantine get takes.
func printRecord(w io.Writer, rec ledger.Record) {
	local.PrintRecord(w, rec)
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  fetch it:   alpipe quarantine get %s\n", rec.Quarantine)
	}
}

// validation is the verdict IngestCSV would reach, without a server, a
// load or a quarantine file.
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
	if err := report(stdout, c.format, v, v.writeText); err != nil {
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

// validateFile reads path as IngestCSV reads the object it would become,
// with the same decoding, binary sniff and whole-file reasons.
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
	// stop rejects the file where IngestCSV would (corrupt gzip, a zip
	// bomb), else fails.
	stop := func(what string, err error) (*validation, error) {
		if reason, ok := ingest.Rejection(err); ok {
			v.FileReason = reason
			return v, nil
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	body, err := ingest.Decode(f, object, info.Size())
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
