package remote

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// rowsBody is the body of a load request: it encodes rows from the source
// only when the transport asks for bytes, one chunk at a time.
//
// Pulling rather than pushing through an io.Pipe has two consequences the
// port needs. The source is not touched before the server asks for the body
// (Expect: 100-continue), so a load whose ID has committed reads nothing.
// And no goroutine of ours can outlive Load: the transport may go on reading
// a request body after Do returns, so Load detaches the body under its mutex
// before handing the source back to the caller.
type rowsBody struct {
	mu       sync.Mutex
	rows     warehouse.RowSource
	codec    *codec
	buf      []byte
	off      int
	n        int64 // rows encoded
	ended    bool  // the end line is in buf: EOF follows
	err      error // why the body broke: the source's or the encoder's error
	detached bool
}

// bodyChunk is how much encoded text one refill aims for.
const bodyChunk = 64 << 10

// errDetached breaks a body that the transport still reads after Load has
// returned; the server then sees a truncated body and commits nothing.
var errDetached = errors.New("load returned before its body was sent")

func newRowsBody(rows warehouse.RowSource, c *codec) *rowsBody {
	return &rowsBody{rows: rows, codec: c}
}

func (b *rowsBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.off == len(b.buf) {
		switch {
		case b.err != nil:
			return 0, b.err
		case b.ended:
			return 0, io.EOF
		case b.detached:
			return 0, errDetached
		}
		b.fill()
	}
	n := copy(p, b.buf[b.off:])
	b.off += n
	return n, nil
}

// fill encodes the next rows into buf. A failing source or an unencodable
// row leaves buf empty and sets err, so Read fails and the transport aborts
// the request instead of ending the body: the end line is never written.
func (b *rowsBody) fill() {
	b.buf, b.off = b.buf[:0], 0
	if b.rows == nil {
		b.err = errors.New("the load has no row source")
		return
	}
	for len(b.buf) < bodyChunk {
		if !b.rows.Next() {
			if err := b.rows.Err(); err != nil {
				b.err = fmt.Errorf("read rows: %w", err)
				b.buf = b.buf[:0]
				return
			}
			b.buf = appendEnd(b.buf, b.n)
			b.ended = true
			return
		}
		var err error
		if b.buf, err = b.codec.appendRow(b.buf, b.rows.Row()); err != nil {
			b.err = fmt.Errorf("row %d: %w", b.n+1, err)
			b.buf = b.buf[:0]
			return
		}
		b.n++
	}
}

// Close does not touch the source: the transport may call it from its own
// goroutine at any time.
func (b *rowsBody) Close() error { return nil }

// detach stops any further use of the source, waiting for a Read in
// progress, and returns the reason the body broke, if it did.
func (b *rowsBody) detach() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.detached = true
	return b.err
}
