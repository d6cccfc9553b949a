package fakegcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
)

// handlerTransport is an http.RoundTripper that calls a handler in process
// instead of dialling: the in-process storage client reaches the fake
// without a listening socket, so the fake has no door of its own (the one
// listener of `alpipe serve` is the only way in from outside).
//
// Both bodies stream through pipes, as they would over a socket: the
// handler reads the client's request body as the client writes it, and
// the client reads the answer while the handler writes it, so a large
// upload or download holds no more than the copy buffers in memory.
//
// Cancellation behaves as a torn connection does: once the request's
// context is done, the handler's reads of the request body fail (never a
// clean EOF, so an aborted upload is not committed) and its writes of the
// answer fail.
type handlerTransport struct {
	h http.Handler
}

var _ http.RoundTripper = handlerTransport{}

// inMemoryHost is the host of the in-process client's URLs. It is never
// resolved or dialled; the fake puts it in the links it answers with
// (resumable session URLs), which come back through the same transport.
const inMemoryHost = "fakegcs.in-process"

type roundTripResult struct {
	res *http.Response
	err error
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	body := &requestBody{ctx: ctx, rc: req.Body}
	if req.Body == nil {
		body.rc = http.NoBody
	}
	sreq := req.Clone(ctx)
	sreq.Body = body
	sreq.RequestURI = req.URL.RequestURI()
	sreq.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.Close = false
	if sreq.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		sreq.ContentLength = -1 // unknown, as a chunked request
	}

	pr, pw := io.Pipe()
	done := make(chan roundTripResult, 1)
	w := &pipeWriter{header: http.Header{}, pw: pw, pr: pr, req: req, ready: done}
	// A cancelled request tears the "connection": the handler's body reads
	// and answer writes fail from then on.
	stop := context.AfterFunc(ctx, func() {
		body.abort()
		pr.CloseWithError(ctx.Err())
	})
	go func() {
		defer stop()
		defer body.Close() // the RoundTripper contract: the request body is closed
		defer func() {
			if v := recover(); v != nil {
				err := fmt.Errorf("local storage fake: handler panicked: %v", v)
				if !w.sent() {
					done <- roundTripResult{err: err}
				}
				pw.CloseWithError(err)
			}
		}()
		t.h.ServeHTTP(w, sreq)
		w.WriteHeader(http.StatusOK) // a no-op when the handler wrote one
		pw.Close()
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// requestBody is the handler's view of the client's request body.
type requestBody struct {
	ctx context.Context
	rc  io.ReadCloser

	mu      sync.Mutex
	aborted bool
	closed  bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	if err := b.failed(); err != nil {
		return 0, err
	}
	n, err := b.rc.Read(p)
	if ferr := b.failed(); ferr != nil {
		// Cancelled while reading: what was read may be the last bytes, but
		// the end is not trusted.
		return n, ferr
	}
	return n, err
}

func (b *requestBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborted || b.ctx.Err() != nil {
		return fmt.Errorf("request cancelled by the client: %w", context.Cause(b.ctx))
	}
	return nil
}

// abort fails every later read and unblocks one in progress by closing the
// client's body, as a torn connection would.
func (b *requestBody) abort() {
	b.mu.Lock()
	b.aborted = true
	b.mu.Unlock()
	b.Close()
}

func (b *requestBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	return b.rc.Close()
}

// pipeWriter is the handler's http.ResponseWriter: the header goes to the
// client when the handler first writes, the body through the pipe.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	pr     *io.PipeReader
	req    *http.Request
	ready  chan<- roundTripResult

	mu       sync.Mutex
	wrote    bool
	bodyless bool
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) sent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wrote
}

func (w *pipeWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		return // informational answers are not passed on
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wrote {
		return
	}
	w.wrote = true
	res := &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header.Clone(),
		Body:          w.pr,
		ContentLength: -1,
		Request:       w.req,
	}
	if n, err := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		res.ContentLength = n
	}
	if w.req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified {
		w.bodyless = true
		res.Body = http.NoBody
		w.pr.Close()
		if w.req.Method != http.MethodHead {
			res.ContentLength = 0
		}
	}
	w.ready <- roundTripResult{res: res}
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	bodyless := w.bodyless
	w.mu.Unlock()
	if bodyless {
		return len(p), nil
	}
	n, err := w.pw.Write(p)
	if errors.Is(err, io.ErrClosedPipe) {
		err = fmt.Errorf("client stopped reading the answer: %w", err)
	}
	return n, err
}

// Flush is a no-op: every Write already reaches the reader.
func (w *pipeWriter) Flush() {}
