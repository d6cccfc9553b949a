package fakegcs

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
)

// An upload sent with Content-Encoding: gzip is stored inflated, as Cloud
// Storage does, within the ingest's bound on a stored .gz object (413
// beyond it). The fake's own inflation has no bound, so it gets a plain body.
const (
	maxExpansion   = 200     // ingest.MaxExpansion (TestGzipBoundIsTheIngests)
	expansionSlack = 1 << 20 // the ingest's own slack, for a small body's gzip overhead
)

// inflateBody replaces r's gzip body by its bounded inflation.
func inflateBody(r *http.Request) error {
	src := &countingReader{r: r.Body}
	zr, err := gzip.NewReader(src)
	if err != nil {
		return fmt.Errorf("bad gzip request body: %w", err)
	}
	r.Body = &inflated{zr: zr, src: src, body: r.Body}
	r.Header.Del("Content-Encoding")
	r.Header.Del("Content-Length")
	r.ContentLength = -1
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type inflated struct {
	zr   *gzip.Reader
	src  *countingReader
	body io.Closer
	out  int64
	err  error // sticky, once the bound is passed
}

func (b *inflated) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.zr.Read(p)
	b.out += int64(n)
	if b.out > b.src.n*maxExpansion+expansionSlack {
		b.err = &statusError{http.StatusRequestEntityTooLarge, fmt.Errorf(
			"gzip request body expands more than %d times (%d bytes from %d compressed bytes): refused as a zip bomb, as the ingest refuses a stored .gz object",
			maxExpansion, b.out, b.src.n)}
		return 0, b.err
	}
	return n, err
}

func (b *inflated) Close() error { return b.body.Close() }
