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

// Abort fails the media stream before cancelling the context, then waits for
// the upload goroutine. After a media error the library never ends an
// upload normally: no final resumable chunk, and a single-shot request body
// that fails (though its multipart closing boundary is sent, so a server
// must commit only a body that ended, as Cloud Storage and fakegcs do).
// Cancelling first would let Close end the stream normally, racing it.
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
