package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// BinarySniff is how much of a file's decoded text BinaryReason looks at.
const BinarySniff = 8000

type runResult struct {
	state  ledger.State
	reason string
}

// timings are how long an attempt's phases took, logged with the outcome.
type timings struct {
	Load, Refresh, Total time.Duration
}

// run streams one generation into the warehouse and the quarantine, filling
// rec's counts. A returned error is transient: a problem with the content
// is a result.
func (s *Service) run(ctx context.Context, obj Object, feed *contract.Feed, rec *ledger.Record, tm *timings) (runResult, error) {
	started := time.Now()
	defer func() { tm.Total = time.Since(started) }()
	body, err := s.objects.Open(ctx, obj.Bucket, obj.Name, obj.Generation)
	if errors.Is(err, objects.ErrNotFound) {
		return runResult{ledger.Rejected, "object generation no longer exists"}, nil
	}
	if err != nil {
		return runResult{}, fmt.Errorf("open: %w", err)
	}
	defer body.Close()

	q := newQuarantine(ctx, s.objects, s.cfg.QuarantineBucket, quarantineName(s.cfg.QuarantinePrefix, feed.Name(), obj), obj, feed)
	defer q.abort()

	text, err := Decode(body, obj.Name, obj.Size)
	if reason, ok := Rejection(err); ok {
		return runResult{ledger.Rejected, reason}, nil
	} else if err != nil {
		return runResult{}, fmt.Errorf("open: %w", err)
	}
	peek := bufio.NewReaderSize(text, BinarySniff)
	head, err := peek.Peek(BinarySniff)
	if reason, ok := Rejection(err); ok {
		return runResult{ledger.Rejected, reason}, nil
	} else if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return runResult{}, fmt.Errorf("read: %w", err)
	}
	if reason := BinaryReason(head); reason != "" {
		return runResult{ledger.Rejected, reason}, nil
	}
	reader := record.NewReader(peek, record.Options{
		MaxRecordBytes: s.cfg.MaxRecordBytes,
		Comma:          feed.SniffDelimiter(head),
		Quote:          feed.Quote(),
	})
	header, err := reader.Next()
	if reason, ok := Rejection(err); ok {
		return runResult{ledger.Rejected, reason}, nil
	}
	switch {
	case errors.Is(err, io.EOF):
		return runResult{ledger.Rejected, "empty object: no header row"}, nil
	case err != nil:
		return runResult{}, fmt.Errorf("read header: %w", err)
	case header.Problem != "":
		return runResult{ledger.Rejected, "unreadable header: " + header.Problem}, nil
	}
	q.setHeader(header.Raw)

	src := &rowSource{
		reader: reader,
		feed:   feed,
		q:      q,
		counts: &rec.Counts,
		dates:  map[int32]struct{}{},
		row:    make([]warehouse.Value, feed.Width()+lineageColumns),
	}
	src.lineage(obj, s.now())
	binding, err := feed.Bind(header.Fields)
	var fileErr *contract.FileError
	switch {
	case errors.As(err, &fileErr):
		// Each row still goes to quarantine with the file's reason.
		src.fileReason = fileErr.Reason
		rec.Drift = ledgerDrift(fileErr.Drift)
	case err != nil:
		return runResult{}, fmt.Errorf("bind header: %w", err)
	default:
		src.binding = binding
		rec.Drift = ledgerDrift(binding.Drift())
	}

	if src.binding != nil {
		res, err := s.warehouse.Load(ctx, warehouse.Load{ID: rec.LoadID, Table: feed.Table(), Rows: src})
		tm.Load = time.Since(started)
		if err != nil {
			if serr := src.Err(); serr != nil {
				err = serr // the source stopped the load: its reason, not the relay
			} else {
				err = fmt.Errorf("load into %s: %w", feed.Table(), err)
			}
			if reason, ok := Rejection(err); ok {
				return rejectContent(rec, reason), nil
			}
			uncommitted(rec, q, false)
			return runResult{}, err
		}
		rec.AlreadyLoaded = res.AlreadyLoaded
	}
	// Drain what the load did not read (all of it when the ID had
	// committed), so counts and quarantine are complete on every attempt.
	for src.Next() {
	}
	if reason, ok := Rejection(src.Err()); ok {
		return rejectContent(rec, reason), nil
	}
	if err := src.Err(); err != nil {
		uncommitted(rec, q, rec.AlreadyLoaded)
		return runResult{}, err
	}
	rec.Quarantine = q.objectName()

	// A daily sum out of range does not fail the file: the note names it.
	note := ""
	if src.binding != nil && len(src.dates) > 0 {
		refreshStarted := time.Now()
		defer func() { tm.Refresh = time.Since(refreshStarted) }()
		var err error
		if note, err = s.refreshAggregates(ctx, feed.Aggregates(), src.sortedDates(), rec.Owner); err != nil {
			return runResult{}, err
		}
	}
	if src.fileReason != "" {
		return runResult{ledger.Rejected, src.fileReason}, nil
	}
	return runResult{state: ledger.Done, reason: note}, nil
}

// uncommitted makes a failed attempt's counts say only what committed: its
// valid rows if loaded (by an earlier attempt), its rejected rows if the
// quarantine object was written (before the load commits).
func uncommitted(rec *ledger.Record, q *quarantine, loaded bool) {
	if !loaded {
		rec.Counts.Loaded = 0
	}
	rec.Quarantine = q.objectName()
	if rec.Quarantine == "" {
		rec.Counts.Quarantined = 0
		rec.Counts.Rejects = nil
	}
}

// rejectContent ends a file whose bytes turned out unreadable part way
// (corrupt gzip, zip bomb): nothing was committed.
func rejectContent(rec *ledger.Record, reason string) runResult {
	rec.Counts = ledger.Counts{}
	return runResult{ledger.Rejected, reason}
}

// BinaryReason says why a file whose decoded text starts with head (its
// first BinarySniff bytes) is not CSV text, or "".
// Excel's "Unicode text" export is UTF-16: binary, but worth a reason.
// Content is binary, like git, when its first bytes hold NULs in the header
// line or more than 1 in 100 bytes; a stray NUL in a text file is a
// row-level rejection instead.
func BinaryReason(head []byte) string {
	line, _, _ := bytes.Cut(head, []byte{'\n'})
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "UTF-16 text (byte order mark): export the file as CSV in UTF-8, or in the encoding its contract declares"
	case bytes.IndexByte(line, 0) >= 0 || bytes.Count(head, []byte{0})*100 > len(head):
		return "binary content: NUL byte in the first 8000 bytes"
	}
	return ""
}

// ledgerDrift converts a header drift for the ledger record; nil when none.
func ledgerDrift(d contract.Drift) *ledger.Drift {
	if d.Empty() {
		return nil
	}
	return &ledger.Drift{Added: d.Added, Missing: d.Missing}
}

func (s *rowSource) sortedDates() []int32 { return slices.Sorted(maps.Keys(s.dates)) }
