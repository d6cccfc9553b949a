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

// binarySniff is how much of a file is checked for NUL bytes.
const binarySniff = 8000

type runResult struct {
	state  ledger.State
	reason string
}

// timings are how long an attempt's phases took, logged with the outcome:
// the first thing to look at when a file is slow.
type timings struct {
	Load, Refresh, Total time.Duration
}

// run streams one generation through validation into the warehouse and the
// quarantine. It fills rec's counts. A returned error is transient: every
// problem with the file's content ends as a result, never as an error.
func (s *Service) run(ctx context.Context, obj Object, feed *contract.Feed, rec *ledger.Record, tm *timings) (runResult, error) {
	started := time.Now()
	defer func() { tm.Total = time.Since(started) }()
	body, err := s.objects.Open(ctx, obj.Bucket, obj.Name, obj.Generation)
	if errors.Is(err, objects.ErrNotFound) {
		// A newer generation replaced it (or it was deleted) before we read
		// it; the newer one has its own event.
		return runResult{ledger.Rejected, "object generation no longer exists"}, nil
	}
	if err != nil {
		return runResult{}, fmt.Errorf("open: %w", err)
	}
	defer body.Close()

	q := newQuarantine(ctx, s.objects, s.cfg.QuarantineBucket, quarantineName(s.cfg.QuarantinePrefix, feed.Name(), obj), obj, feed)
	defer q.abort()

	text, err := Decode(body, obj.Name, obj.Size, s.cfg.MaxExpansion)
	if reason, ok := Rejection(err); ok {
		return runResult{ledger.Rejected, reason}, nil
	} else if err != nil {
		return runResult{}, fmt.Errorf("open: %w", err)
	}
	peek := bufio.NewReaderSize(text, binarySniff)
	head, err := peek.Peek(binarySniff)
	if reason, ok := Rejection(err); ok {
		return runResult{ledger.Rejected, reason}, nil
	} else if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return runResult{}, fmt.Errorf("read: %w", err)
	}
	if reason := binaryReason(head); reason != "" {
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
		// The whole file is refused, but its rows are still accounted for:
		// each goes to quarantine with the file's reason, so the file can be
		// fixed and re-queued as a whole.
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
	// Drain what the load did not read (all of it when the ID had committed
	// already), so the counts and the quarantine are complete on every
	// attempt; the source commits the quarantine at the file's end.
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

	// A daily sum out of range does not fail the file: its rows are
	// loaded and every other group refreshed; the note names the groups
	// left out, and status lists a DONE file with a reason.
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

// uncommitted makes a failed attempt's counts say only what is committed:
// the rows it read; its valid rows if loaded (by an earlier attempt, when
// the load ID had committed); its rejected rows if their quarantine object
// was written, which it is before the load commits, so it can stand while
// the load failed (the retry rewrites it).
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
// (corrupt gzip, zip bomb): nothing was committed, so no row counts as
// loaded or quarantined, and the quarantine written so far is discarded.
func rejectContent(rec *ledger.Record, reason string) runResult {
	rec.Counts = ledger.Counts{}
	return runResult{ledger.Rejected, reason}
}

// binary calls content binary, like git, when its first bytes hold NULs: no
// CSV export has them, and quarantining an image line by line helps nobody.
// A stray NUL in a text file (a corrupt value) is a row-level rejection
// instead, so the test is on the header line or on NULs in numbers (more
// than 1 in 100 bytes), which text does not have and images do.
func binary(head []byte) bool {
	n := bytes.Count(head, []byte{0})
	if n == 0 {
		return false
	}
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	}
	return bytes.IndexByte(line, 0) >= 0 || n*100 > len(head)
}

// binaryReason says why a file's first bytes are not CSV text, or "".
// Excel's "Unicode text" export is UTF-16, which is binary to a CSV reader
// (a NUL after every ASCII letter) but deserves a reason one can act on.
func binaryReason(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "UTF-16 text (byte order mark): export the file as CSV in UTF-8, or in the encoding its contract declares"
	case binary(head):
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
