package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DefaultMaxExpansion bounds how many decompressed bytes a gzip object may
// yield per stored byte when Config.MaxExpansion is zero. ERP exports
// compress 5 to 20 times; a zip bomb does a thousand times and more.
const DefaultMaxExpansion = 200

// expansionSlack is decompressed output always allowed on top of the ratio,
// so that a small file's gzip header overhead never counts against it.
const expansionSlack = 1 << 20

// contentError is a problem with the object's bytes themselves (corrupt
// gzip, a zip bomb): retrying reads the same bytes, so the file is rejected
// as a whole with this reason.
type contentError struct{ reason string }

func (e *contentError) Error() string { return e.reason }

// Rejection returns the whole-file reason of an error of Decode or its
// reader (corrupt gzip, zip bomb), and false for any other error: the
// source's own.
func Rejection(err error) (string, bool) {
	var ce *contentError
	if errors.As(err, &ce) {
		return ce.reason, true
	}
	return "", false
}

var gzipMagic = []byte{0x1f, 0x8b}

// Decode returns the object's text: the body itself, or its gzip stream
// decompressed, with the expansion bound (0: DefaultMaxExpansion). It is
// the ingester's decoding stage, also for tools that read a file as
// IngestCSV does without loading it. Gzip is recognised by its magic bytes, not by metadata: an
// object stored with Content-Encoding: gzip, read raw, and a .csv.gz
// matched by the contract's pattern both start with them, and a CSV never
// does (0x1f is a control character). Cloud Storage's decompressive
// transcoding, when a reader asks for it, hands over plain text, which
// passes through, bounded by the stored size instead: stored is the
// object's size as the event reports it (0: unknown), which for a
// transcoded object is its compressed size.
func Decode(body io.Reader, name string, stored int64, maxExpansion int) (io.Reader, error) {
	if maxExpansion <= 0 {
		maxExpansion = DefaultMaxExpansion
	}
	r, err := gunzip(body, name, maxExpansion)
	if err != nil || stored <= 0 {
		return r, err
	}
	return &sizeBound{r: r, limit: stored*int64(maxExpansion) + expansionSlack, ratio: maxExpansion, stored: stored}, nil
}

// sizeBound stops a text longer than its object's stored size allows.
type sizeBound struct {
	r      io.Reader
	n      int64
	limit  int64
	stored int64
	ratio  int
}

func (s *sizeBound) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.n > s.limit {
		return 0, &contentError{fmt.Sprintf("content expands more than %d times its stored %d bytes: refused as a zip bomb", s.ratio, s.stored)}
	}
	return n, err
}

func gunzip(body io.Reader, name string, maxExpansion int) (io.Reader, error) {
	src := &countingReader{r: body}
	br := bufio.NewReader(src)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, src.wrap(err)
	}
	if !bytes.Equal(head, gzipMagic) {
		if strings.HasSuffix(name, ".gz") && len(head) > 0 {
			return nil, &contentError{"named .gz but not gzip content"}
		}
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, src.wrap(fmt.Errorf("gzip header: %w", err))
	}
	return &boundedReader{zr: zr, src: src, ratio: int64(maxExpansion)}, nil
}

// countingReader counts the stored bytes read and keeps the source's own
// error, so that a failed read of the store (transient) is told apart from
// a corrupt stream (permanent).
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// wrap classifies an error of the decompressor.
func (c *countingReader) wrap(err error) error {
	if c.err != nil {
		return fmt.Errorf("read object: %w", c.err)
	}
	return &contentError{"gzip: " + strings.TrimPrefix(err.Error(), "gzip: ")}
}

// boundedReader decompresses, refusing to yield more than ratio bytes per
// stored byte read so far: the bomb is stopped after a few megabytes, not
// after filling the disk or the load job.
type boundedReader struct {
	zr    *gzip.Reader
	src   *countingReader
	ratio int64
	out   int64
	err   error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.zr.Read(p)
	b.out += int64(n)
	if b.out > b.src.n*b.ratio+expansionSlack {
		b.err = &contentError{fmt.Sprintf("gzip expands more than %d times (%d bytes from %d stored bytes): refused as a zip bomb", b.ratio, b.out, b.src.n)}
		return 0, b.err
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
	default:
		err = b.src.wrap(err)
		b.err = err
	}
	return n, err
}

// BinaryReason returns why a file whose decoded text starts with head (its
// first BinarySniff bytes) is rejected as a whole as not being text, or ""
// when it is text.
func BinaryReason(head []byte) string { return binaryReason(head) }

// BinarySniff is how much of a file's decoded text Binary looks at.
const BinarySniff = binarySniff
