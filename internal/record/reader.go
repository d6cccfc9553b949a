// Package record reads CSV records from a stream: RFC 4180 plus the dirt of
// real ERP exports (BOM, CRLF, blank lines, quoted newlines, broken quoting,
// endless lines). It is not encoding/csv because a malformed record must
// not stop the file (it gets a Problem), memory must stay bounded whatever
// the input, and the steady state must not allocate.
//
// A stray quote must not take the rows after it along: a record whose quoted
// field goes on past its line is accepted only if it closes well formed
// within MaxRecordBytes. Otherwise only its first physical line is the
// record (ProblemUnterminatedQuote), and reading resumes at the next line.
// The same bytes always split the same way, whatever the read sizes.
//
// A line longer than MaxRecordBytes is a record with a Problem whose Raw is
// its first MaxRecordBytes bytes; CopyRest streams the rest of the line.
package record

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"strconv"
)

// DefaultMaxRecordBytes bounds a record when Options leaves it zero.
const DefaultMaxRecordBytes = 1 << 20

// bufSize is the read buffer; most records are split in place in it.
const bufSize = 64 << 10

// Problems reported in Record.Problem; the over-long one names the limit.
const (
	ProblemUnterminatedQuote = "unterminated quoted field"
	ProblemBareQuote         = "bare quote in unquoted field"
	ProblemAfterQuote        = "unexpected character after closing quote"
)

// Record is one CSV record. Fields and Raw point into the reader's buffers
// and are only valid until the next call to Next.
type Record struct {
	Line    int      // physical line where the record starts (1-based; the header is line 1)
	Fields  [][]byte // values, quotes removed and "" unescaped; nil when Problem is set
	Raw     []byte   // the record's bytes as read, without the trailing CR/LF
	Problem string   // why the record is malformed; empty when it is fine
	// Long means the record is a line longer than MaxRecordBytes: Raw is
	// its first MaxRecordBytes bytes, and Reader.CopyRest streams the rest.
	Long bool
}

// Options tunes a Reader. The zero value is usable.
type Options struct {
	MaxRecordBytes int  // longest accepted record; 0 means DefaultMaxRecordBytes
	Comma          byte // field separator; 0 means ','; never a quote, CR or LF
	Quote          byte // quote character; 0 means '"'; never the separator, CR or LF
}

// Reader reads records from an io.Reader. Memory is bounded by the read
// buffer plus about twice MaxRecordBytes (a raw record and its unescaped
// fields).
type Reader struct {
	src     io.Reader
	buf     []byte
	r, w    int   // unread bytes are buf[r:w]
	base    int64 // offset in src of buf[0]
	err     error // sticky error from src, io.EOF included
	lines   int   // line feeds consumed so far
	started bool  // the BOM check has been done

	max     int
	comma   byte
	quote   byte
	tooLong string
	raw     []byte // the current record: a copy in own, or a line of buf
	own     []byte // storage for records assembled by copying
	data    []byte // unescaped values of quoted fields holding ""
	spans   []span // field boundaries in raw
	fields  [][]byte
	st      state
	cur     span // field being scanned
	problem string
	scanned int // bytes of raw already seen by the state machine

	// A record past its first line: raw[:firstEnd] is that line with its
	// line end (firstEOL bytes), secondAt the source offset of the next line
	// (see rewind). firstEnd is 0 while the record is on one line.
	firstEnd, firstEOL int
	secondAt           int64
	pending            bool // the rest of a Long record's line is unread

	copyAll bool // tests: assemble every record by copying, to check the in-place paths
}

// span locates one field in raw. For a quoted field it excludes the quotes.
type span struct {
	start, end int
	esc        bool // holds "" pairs, so it must be unescaped
}

// state of the quoting state machine between two bytes of a record.
type state uint8

const (
	sFieldStart state = iota // before the first byte of a field
	sUnquoted                // inside an unquoted field
	sQuoted                  // inside a quoted field
	sQuote                   // just after a '"' in a quoted field: an escape or the closing quote
	sBroken                  // malformed: the rest of the line is raw text only
)

func NewReader(src io.Reader, opt Options) *Reader {
	limit := cmp.Or(max(opt.MaxRecordBytes, 0), DefaultMaxRecordBytes)
	return &Reader{
		src:     src,
		buf:     make([]byte, bufSize),
		max:     limit,
		comma:   cmp.Or(opt.Comma, ','),
		quote:   cmp.Or(opt.Quote, '"'),
		tooLong: "record longer than " + strconv.Itoa(limit) + " bytes",
	}
}

// Next returns the next record, skipping blank lines; io.EOF at the end, or
// the source's error. A malformed record is a Record with a Problem.
func (r *Reader) Next() (Record, error) {
	if !r.started {
		if err := r.start(); err != nil {
			return Record{}, err
		}
	}
	if r.pending {
		if _, err := r.CopyRest(io.Discard); err != nil {
			return Record{}, err
		}
	}
	for {
		b := r.buf[r.r:r.w]
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if r.err == nil && (r.r > 0 || r.w < len(r.buf)) {
				r.fill()
				continue
			}
			if len(b) == 0 {
				return Record{}, r.err
			}
			return r.slow()
		}
		line := b[:i]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if onlyCR(line) {
			r.r += i + 1
			r.lines++
			continue
		}
		if len(line) > r.max || r.copyAll {
			return r.slow()
		}
		// The common case: a whole line in the buffer, split in place.
		f, ok := r.split(line, bytes.IndexByte(line, r.quote))
		if !ok {
			r.reset(line)
			if r.scan(); r.st == sQuoted {
				return r.slow()
			}
		}
		r.r += i + 1
		r.lines++
		if !ok {
			return r.finish(r.lines), nil
		}
		return Record{Line: r.lines, Fields: f, Raw: line}, nil
	}
}

// split splits a line whose quoted fields, if any, are all the simple kind
// the ERP writes ("89,90"), the first quote at q (-1: none): it searches,
// where scan steps through every byte. Any other line is left to scan: ok
// is false.
func (r *Reader) split(line []byte, q int) (_ [][]byte, ok bool) {
	f := r.fields[:0]
	start := 0 // of the current field
	for {
		stop := q // the separators before the next quote, or all left
		if q < 0 {
			stop = len(line)
		}
		for {
			j := bytes.IndexByte(line[start:stop], r.comma)
			if j < 0 {
				break
			}
			f = append(f, line[start:start+j:start+j])
			start += j + 1
		}
		if q < 0 {
			f = append(f, line[start:len(line):len(line)])
			break
		}
		if q != start {
			return nil, false
		}
		end := bytes.IndexByte(line[q+1:], r.quote)
		if end < 0 {
			return nil, false
		}
		end += q + 1
		f = append(f, line[q+1:end:end])
		if end+1 == len(line) {
			break
		}
		if line[end+1] != r.comma {
			return nil, false
		}
		start = end + 2
		if q = bytes.IndexByte(line[start:], r.quote); q >= 0 {
			q += start
		}
	}
	r.fields = f
	return f, true
}

// start strips a UTF-8 byte order mark, which would glue itself to the
// first column name.
func (r *Reader) start() error {
	for r.w-r.r < 3 && r.err == nil {
		r.fill()
	}
	if r.err != nil && r.err != io.EOF && r.w == r.r {
		return r.err
	}
	if bytes.HasPrefix(r.buf[r.r:r.w], []byte{0xEF, 0xBB, 0xBF}) {
		r.r += 3
	}
	r.started = true
	return nil
}

// fill moves the unread bytes to the front of the buffer and reads more.
func (r *Reader) fill() {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.base += int64(r.r)
		r.w -= r.r
		r.r = 0
	}
	for tries := 0; tries < 100; tries++ {
		n, err := r.src.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.err = errors.New("record: source returned an invalid count")
			return
		}
		r.w += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// slow assembles a record by copying it into raw, line by line, through the
// quoting state machine: what the in-place path cannot split.
// Blank lines are skipped here too.
func (r *Reader) slow() (Record, error) {
	start := r.lines + 1
	r.reset(r.own[:0])
	for {
		if r.r == r.w {
			if r.err == nil {
				r.fill()
				continue
			}
			if r.err != io.EOF {
				return Record{}, r.err
			}
			// The end of the input ends the record, whatever its state.
			if r.blank() {
				return Record{}, io.EOF
			}
			if r.st == sQuoted {
				r.problem = ProblemUnterminatedQuote
			}
			return r.end(start, nil), nil
		}
		b := r.buf[r.r:r.w]
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			// No line end in the buffer: take what there is, except a final
			// CR, which may be the first half of a CRLF.
			n := len(b)
			if b[n-1] == '\r' {
				n--
			}
			if n == 0 {
				if r.err == nil {
					r.fill()
				} else {
					r.r++ // a CR ending the input ends the line
				}
				continue
			}
			if len(r.raw)+n > r.max {
				return r.overlong(start), nil
			}
			r.r += n
			r.take(b[:n])
			r.scan()
			continue
		}
		seg := b[:i]
		// A CR before the LF ends the line, unless a quoted field is still
		// open: then CRLF is content.
		cr := len(seg) > 0 && seg[len(seg)-1] == '\r'
		if cr {
			seg = seg[:len(seg)-1]
		}
		if len(r.raw)+len(seg) > r.max {
			return r.overlong(start), nil
		}
		r.r += i + 1
		r.lines++
		r.take(seg)
		r.scan()
		eol := lf
		if cr {
			eol = crlf
		}
		if r.st != sQuoted {
			if r.blank() {
				start = r.lines + 1
				r.reset(r.own[:0])
				continue
			}
			return r.end(start, eol), nil
		}
		if len(r.raw)+len(eol) > r.max {
			// The quoted field cannot go on to the next line within the limit.
			r.problem = ProblemUnterminatedQuote
			return r.end(start, eol), nil
		}
		r.take(eol)
		r.scan()
		if r.firstEnd == 0 {
			r.firstEnd, r.firstEOL, r.secondAt = len(r.raw), len(eol), r.base+int64(r.r)
		}
	}
}

// end returns the record scanned so far; eol is the line end consumed after
// it, if any. A malformed record that went on past its first line is not a
// record: see rewind.
func (r *Reader) end(start int, eol []byte) Record {
	if r.problem != "" && r.firstEnd > 0 {
		return r.rewind(start, eol)
	}
	return r.finish(start)
}

// overlong ends a record that the bytes at r.r would take past the limit.
func (r *Reader) overlong(start int) Record {
	if r.firstEnd > 0 {
		// A quoted field ran on for lines up to the limit: a stray quote,
		// most likely, with valid rows after it.
		r.problem = ProblemUnterminatedQuote
		return r.rewind(start, nil)
	}
	// One line longer than the limit: its first max bytes are the record,
	// and the rest of it, up to the next LF whatever its quotes, is left
	// for CopyRest, so that a stray quote cannot carry the record further.
	n := r.max - len(r.raw)
	r.take(r.buf[r.r : r.r+n])
	r.r += n
	r.pending = true
	return Record{Line: start, Raw: r.raw, Problem: r.tooLong, Long: true}
}

// rewind returns the first line of the record being assembled with
// ProblemUnterminatedQuote and moves the reader back to the second line, so
// the lines the open quote took in are read again. When a refill has
// dropped them from the buffer, the rest of raw (and eol, the line end
// consumed after it) goes back in front of the unread input.
func (r *Reader) rewind(start int, eol []byte) Record {
	rec := Record{Line: start, Raw: r.raw[:r.firstEnd-r.firstEOL], Problem: ProblemUnterminatedQuote}
	r.lines = start
	if at := r.secondAt - r.base; at >= 0 {
		r.r = int(at)
		return rec
	}
	rest := r.raw[r.firstEnd:]
	replay := make([]byte, 0, len(rest)+len(eol)+r.w-r.r)
	replay = append(append(append(replay, rest...), eol...), r.buf[r.r:r.w]...)
	r.base += int64(r.w) - int64(len(replay))
	r.r, r.w = 0, 0
	switch r.err {
	case nil:
		r.src = io.MultiReader(bytes.NewReader(replay), r.src)
	case io.EOF:
		r.src = bytes.NewReader(replay)
	default:
		r.src = io.MultiReader(bytes.NewReader(replay), errReader{r.err})
	}
	r.err = nil
	return rec
}

// errReader fails with the error the source failed with before a rewind.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// CopyRest writes the rest of a Long record's line to w, without the line
// end; call it before the next Next, which otherwise skips it. For any other
// record it writes nothing.
func (r *Reader) CopyRest(w io.Writer) (int64, error) {
	var n int64
	for r.pending {
		if r.r == r.w {
			if r.err == nil {
				r.fill()
				continue
			}
			r.pending = false // the end of the input ends the line
			if r.err != io.EOF {
				return n, r.err
			}
			return n, nil
		}
		b := r.buf[r.r:r.w]
		chunk, next := b, len(b)
		i := bytes.IndexByte(b, '\n')
		switch {
		case i >= 0:
			chunk, next = b[:i], i+1
			if k := len(chunk); k > 0 && chunk[k-1] == '\r' {
				chunk = chunk[:k-1]
			}
		case b[len(b)-1] == '\r':
			// Maybe the first half of a CRLF: decide once more is read.
			chunk, next = b[:len(b)-1], len(b)-1
			if next == 0 {
				if r.err == nil {
					r.fill()
				} else {
					r.r++ // a CR ending the input ends the line
				}
				continue
			}
		}
		if len(chunk) > 0 {
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		r.r += next
		if i >= 0 {
			r.lines++
			r.pending = false
		}
	}
	return n, nil
}

var (
	lf   = []byte{'\n'}
	crlf = []byte{'\r', '\n'}
)

func (r *Reader) reset(raw []byte) {
	r.raw = raw
	r.spans = r.spans[:0]
	r.st = sFieldStart
	r.cur = span{}
	r.problem = ""
	r.scanned = 0
	r.firstEnd, r.firstEOL, r.secondAt = 0, 0, 0
}

// blank reports whether the record scanned so far is nothing or carriage
// returns only (Excel leaves CR CR LF behind).
func (r *Reader) blank() bool {
	return len(r.spans) == 0 && (r.st == sFieldStart || r.st == sUnquoted) && onlyCR(r.raw)
}

func onlyCR(b []byte) bool { return len(bytes.TrimLeft(b, "\r")) == 0 }

// take appends p to raw; the callers keep raw within max.
func (r *Reader) take(p []byte) {
	if need := len(r.raw) + len(p); need > cap(r.raw) {
		// Grow by doubling, but never past max: append's own growth could
		// reserve up to twice the limit.
		n := min(max(2*cap(r.raw), need, 512), r.max)
		grown := make([]byte, len(r.raw), n)
		copy(grown, r.raw)
		r.raw = grown
	}
	r.raw = append(r.raw, p...)
	r.own = r.raw[:0] // keep the storage for the next record
}

func (r *Reader) finish(start int) Record {
	if r.problem != "" {
		return Record{Line: start, Raw: r.raw, Problem: r.problem}
	}
	// Close the last field.
	switch r.st {
	case sUnquoted, sFieldStart:
		r.cur.end = len(r.raw)
		if r.st == sFieldStart {
			r.cur.start = len(r.raw)
		}
		r.spans = append(r.spans, r.cur)
	case sQuote:
		r.spans = append(r.spans, r.cur)
	}
	r.data = r.data[:0]
	for _, s := range r.spans {
		if !s.esc {
			continue
		}
		if cap(r.data) < len(r.raw) {
			// Unescaped values are shorter than the record: reserving that
			// once keeps data within the limit too.
			r.data = make([]byte, 0, len(r.raw))
		}
		r.data = unescape(r.data, r.raw[s.start:s.end], r.quote)
	}
	f := r.fields[:0]
	d := r.data
	for _, s := range r.spans {
		if !s.esc {
			f = append(f, r.raw[s.start:s.end:s.end])
			continue
		}
		n := s.end - s.start - bytes.Count(r.raw[s.start:s.end], []byte{r.quote})/2
		f = append(f, d[:n:n])
		d = d[n:]
	}
	r.fields = f
	return Record{Line: start, Fields: f, Raw: r.raw}
}

// unescape appends q with each doubled quote turned into one.
func unescape(dst, q []byte, quote byte) []byte {
	for {
		i := bytes.IndexByte(q, quote)
		if i < 0 {
			return append(dst, q...)
		}
		dst = append(dst, q[:i+1]...)
		q = q[i+2:]
	}
}

// scan runs the quoting state machine over raw[scanned:], recording field
// spans as they close; on locals, as this loop is every quoted record's cost.
func (r *Reader) scan() {
	raw, comma, quote := r.raw, r.comma, r.quote
	st, cur, spans := r.st, r.cur, r.spans
	i := r.scanned
	for i < len(raw) {
		switch st {
		case sFieldStart:
			switch raw[i] {
			case quote:
				cur = span{start: i + 1}
				st = sQuoted
				i++
			case comma:
				spans = append(spans, span{start: i, end: i})
				i++
			default:
				cur = span{start: i}
				st = sUnquoted
			}
		case sUnquoted:
			j := i
			for j < len(raw) && raw[j] != comma && raw[j] != quote {
				j++
			}
			i = j
			if j == len(raw) {
				break
			}
			if raw[j] == quote {
				r.problem = ProblemBareQuote
				st = sBroken
				break
			}
			cur.end = j
			spans = append(spans, cur)
			st = sFieldStart
			i++
		case sQuoted:
			j := bytes.IndexByte(raw[i:], quote)
			if j < 0 {
				i = len(raw)
				break
			}
			i += j + 1
			st = sQuote
		case sQuote:
			switch raw[i] {
			case quote:
				cur.esc = true
				st = sQuoted
			case comma:
				cur.end = i - 1
				spans = append(spans, cur)
				st = sFieldStart
			default:
				r.problem = ProblemAfterQuote
				st = sBroken
			}
			i++
		case sBroken:
			i = len(raw)
		}
	}
	if st == sQuote {
		// The closing quote may be the last byte of the record.
		cur.end = len(raw) - 1
	}
	r.st, r.cur, r.spans = st, cur, spans
	r.scanned = i
}
