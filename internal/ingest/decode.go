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

// MaxExpansion bounds decompressed bytes per stored byte: ERP exports
// compress 5 to 20 times, a zip bomb a thousand and more.
const MaxExpansion = 200

// expansionSlack is allowed on top of the ratio, for a small file's overhead.
const expansionSlack = 1 << 20

// expansionLimit is how many bytes stored bytes may decompress to.
func expansionLimit(stored int64) int64 { return stored*MaxExpansion + expansionSlack }

// contentError is a problem with the object's bytes (corrupt gzip, a zip
// bomb): a retry reads the same bytes, so the file is rejected.
type contentError struct{ reason string }

func (e *contentError) Error() string { return e.reason }

// Rejection returns the whole-file reason of an error of Decode or its
// reader, and false for any other (the source's own).
func Rejection(err error) (string, bool) {
	var ce *contentError
	if errors.As(err, &ce) {
		return ce.reason, true
	}
	return "", false
}

var gzipMagic = []byte{0x1f, 0x8b}

// Decode returns the object's text: the body, or its gzip stream inflated
// within MaxExpansion. Gzip is recognised by its magic bytes, which no
// CSV starts with, not by metadata. Text that Cloud Storage inflated itself
// passes through, bounded by stored, the event's (compressed) size; 0 is
// unknown.
func Decode(body io.Reader, name string, stored int64) (io.Reader, error) {
	r, err := gunzip(body, name)
	if err != nil || stored <= 0 {
		return r, err
	}
	return &sizeBound{r: r, limit: expansionLimit(stored), stored: stored}, nil
}

// sizeBound stops a text longer than its object's stored size allows.
type sizeBound struct {
	r      io.Reader
	n      int64
	limit  int64
	stored int64
}

func (s *sizeBound) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.n > s.limit {
		return 0, &contentError{fmt.Sprintf("content expands more than %d times its stored %d bytes: refused as a zip bomb", MaxExpansion, s.stored)}
	}
	return n, err
}

func gunzip(body io.Reader, name string) (io.Reader, error) {
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
	return &boundedReader{zr: zr, src: src}, nil
}

// countingReader counts the stored bytes read and keeps the source's error,
// a transient one, apart from a corrupt stream's.
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

func (c *countingReader) wrap(err error) error {
	if c.err != nil {
		return fmt.Errorf("read object: %w", c.err)
	}
	return &contentError{"gzip: " + strings.TrimPrefix(err.Error(), "gzip: ")}
}

// boundedReader decompresses at most MaxExpansion bytes per stored byte read so far.
type boundedReader struct {
	zr  *gzip.Reader
	src *countingReader
	out int64
	err error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.zr.Read(p)
	b.out += int64(n)
	if b.out > expansionLimit(b.src.n) {
		b.err = &contentError{fmt.Sprintf("gzip expands more than %d times (%d bytes from %d stored bytes): refused as a zip bomb", MaxExpansion, b.out, b.src.n)}
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
