package fakegcs

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

func inProcessClient(t *testing.T, h http.Handler) *http.Client {
	p := serveInProcess(h)
	t.Cleanup(p.stop)
	return &http.Client{Transport: p.transport}
}

// within fails the test if f does not return in time: a transport that
// buffered a body whole would deadlock these exchanges.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no progress in 10 s (a body is buffered, not streamed)", what)
	}
}

func TestHandlerTransportStreamsAnswers(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-release // the rest only after the client has read the first bytes
		io.WriteString(w, " rest")
	})
	c := inProcessClient(t, h)
	within(t, "answer", func() {
		res, err := c.Get("http://" + inMemoryHost + "/x")
		if err != nil {
			t.Error(err)
			return
		}
		defer res.Body.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(res.Body, buf); err != nil || string(buf) != "first" {
			t.Errorf("first read %q, %v", buf, err)
		}
		close(release)
		rest, err := io.ReadAll(res.Body)
		if err != nil || string(rest) != " rest" {
			t.Errorf("rest %q, %v", rest, err)
		}
	})
}

func TestHandlerTransportStreamsRequests(t *testing.T) {
	got := make(chan string)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		_, _ = io.ReadFull(r.Body, buf)
		got <- string(buf) // before the client has finished writing
		rest, _ := io.ReadAll(r.Body)
		got <- string(rest)
	})
	c := inProcessClient(t, h)
	pr, pw := io.Pipe()
	within(t, "request", func() {
		go func() {
			res, err := c.Post("http://"+inMemoryHost+"/x", "text/plain", pr)
			if err == nil {
				res.Body.Close()
			}
		}()
		io.WriteString(pw, "first")
		if s := <-got; s != "first" {
			t.Errorf("handler read %q first", s)
		}
		io.WriteString(pw, " rest")
		pw.Close()
		if s := <-got; s != " rest" {
			t.Errorf("handler read %q then", s)
		}
	})
}

// A cancelled request is a torn connection: the handler's reads of the body
// fail, and never end in a clean EOF that would commit a partial upload.
func TestHandlerTransportCancelFailsTheBody(t *testing.T) {
	readErr := make(chan error, 1)
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		_, err := io.ReadAll(r.Body)
		readErr <- err
	})
	c := inProcessClient(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+inMemoryHost+"/x", pr)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(req)
		errc <- err
	}()
	io.WriteString(pw, "part of an upload")
	<-started
	cancel()
	within(t, "cancel", func() {
		if err := <-readErr; err == nil {
			t.Error("handler's body read ended cleanly, want the error of a torn connection")
		}
	})
	// Go's transport returns once the body's reader does; storage.Writer
	// closes its pipe on cancellation.
	pw.CloseWithError(context.Canceled)
	within(t, "client", func() {
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("client: %v, want context.Canceled", err)
		}
	})
}

// A client that stops reading ends the handler's writes, as a closed
// connection would; the handler does not block forever.
func TestHandlerTransportClosedAnswerStopsTheHandler(t *testing.T) {
	writeErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
	})
	c := inProcessClient(t, h)
	within(t, "close", func() {
		res, err := c.Get("http://" + inMemoryHost + "/x")
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = res.Body.Read(make([]byte, 1))
		res.Body.Close()
		if err := <-writeErr; err == nil {
			t.Error("handler's writes did not fail after the client closed the answer")
		}
	})
}
