package ingest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// lineageColumns are appended to every feed's values: source_object,
// source_generation, source_line, ingested_at (see warehouse/schema).
const lineageColumns = 4

// codeFileRejected: the header refused the file, and so each of its rows.
const codeFileRejected = "file_rejected"

// RejectCodes lists, sorted, every code a file's `rejects` counts can hold
// with the feeds of reg.
func RejectCodes(reg *contract.Registry) []string {
	codes := append([]string{codeFileRejected}, contract.RejectCodes()...)
	for _, f := range reg.Feeds() {
		codes = append(codes, f.RejectCodes()...)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// rowSource yields a file's valid rows to the warehouse and sends the others
// to the quarantine, in one pass. At the end it commits the quarantine
// before reporting the end: the warehouse commits only a source that ended
// without Err, so a file is never loaded without its rejected rows.
type rowSource struct {
	reader     *record.Reader
	feed       *contract.Feed
	binding    *contract.Binding // nil when the whole file is rejected
	fileReason string
	q          *quarantine
	counts     *ledger.Counts
	dates      map[int32]struct{}
	seen       [64]int64 // days+2^32 of dates in dates, spares a map write per row
	row        []warehouse.Value
	err        error
	done       bool
}

var _ warehouse.RowSource = (*rowSource)(nil)

func (s *rowSource) lineage(obj Object, now time.Time) {
	w := s.feed.Width()
	s.row[w] = warehouse.StringValue(fmt.Sprintf("gs://%s/%s", obj.Bucket, obj.Name))
	s.row[w+1] = warehouse.IntValue(obj.Generation)
	s.row[w+3] = warehouse.TimeValue(now)
}

// Next advances to the next valid row, quarantining invalid ones on the way.
func (s *rowSource) Next() bool {
	if s.done {
		return false
	}
	for {
		rec, err := s.reader.Next()
		if errors.Is(err, io.EOF) {
			s.done = true
			if err := s.q.close(); err != nil {
				s.fail(err)
			}
			return false
		}
		if err != nil {
			s.fail(fmt.Errorf("read line %d: %w", rec.Line, err))
			return false
		}
		s.counts.Read++
		if ok := s.accept(rec); ok {
			s.counts.Loaded++
			return true
		}
		if s.err != nil {
			return false
		}
	}
}

func (s *rowSource) accept(rec record.Record) bool {
	var reject contract.Reject
	switch {
	case rec.Problem != "":
		reject = contract.Unreadable(rec.Problem)
	case s.binding == nil:
		reject = contract.Reject{Code: codeFileRejected, Detail: "file rejected: " + s.fileReason}
	default:
		reject = s.binding.Validate(rec.Fields, s.row)
	}
	if reject.OK() {
		s.row[s.feed.Width()+2] = warehouse.IntValue(int64(rec.Line))
		if i := s.feed.DateIndex(); i >= 0 {
			d := s.row[i].Days
			if slot := &s.seen[uint32(d)%uint32(len(s.seen))]; *slot != int64(d)+1<<32 {
				*slot = int64(d) + 1<<32
				s.dates[d] = struct{}{}
			}
		}
		return true
	}
	s.counts.Quarantined++
	if s.counts.Rejects == nil {
		s.counts.Rejects = map[string]int64{}
	}
	s.counts.Rejects[reject.Code]++
	var rest func(io.Writer) (int64, error)
	if rec.Long {
		rest = s.reader.CopyRest
	}
	if err := s.q.add(rec.Line, reject, rec.Raw, rest); err != nil {
		s.fail(fmt.Errorf("quarantine line %d: %w", rec.Line, err))
	}
	return false
}

func (s *rowSource) fail(err error) {
	s.err = err
	s.done = true
}

func (s *rowSource) Row() []warehouse.Value { return s.row }

// Err reports why the stream stopped early: the load must not commit.
func (s *rowSource) Err() error { return s.err }
