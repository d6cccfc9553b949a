package objects

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"cloud.google.com/go/storage"
)

var errAborted = errors.New("objects: upload aborted")

// gcsWriter adapts storage.Writer to Writer, adding an Abort that cannot
// race into a committed object.
type gcsWriter struct {
	w            *storage.Writer
	cancel       context.CancelFunc
	bucket, name string

	mu     sync.Mutex
	done   bool
	err    error
	result Attrs
}

var _ Writer = (*gcsWriter)(nil)

func (w *gcsWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", describe(w.bucket, w.name, 0), err)
	}
	return n, nil
}

func (w *gcsWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.err
	}
	w.done = true
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		w.err = fmt.Errorf("create %s: %w", describe(w.bucket, w.name, 0), err)
		return w.err
	}
	w.result = toAttrs(w.w.Attrs())
	return nil
}

// Abort fails the media stream with an error before cancelling the context,
// then waits for the upload goroutine. The library never ends an upload
// normally after a media error: a resumable upload does not send its final
// chunk (the one declaring the total size), and a single-shot upload's
// request body fails, so the HTTP client neither sends the body's end (the
// zero-length chunk, or END_STREAM on HTTP/2) nor reuses the connection.
// The multipart body does carry its closing boundary even then (the
// library's multipart writer closes before it propagates the error), which
// is why a server must, as Cloud Storage does, commit only a request whose
// body ended (fakegcs does). Cancelling first would not be safer: Close
// would end the media stream normally and race the cancellation.
func (w *gcsWriter) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	w.err = errAborted
	//lint:ignore SA1019 deprecated in favour of cancelling, which alone races (above)
	_ = w.w.CloseWithError(errAborted)
	w.cancel()
	_ = w.w.Close() // waits for the upload goroutine, so nothing lands after Abort returns
}

func (w *gcsWriter) Attrs() Attrs {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.result
}
