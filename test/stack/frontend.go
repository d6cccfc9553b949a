package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Frontend stands where Cloud Run's front end stands, between the callers
// and one service's process: it forwards every request, answers 503 when the
// process is down, and records each request with what the process answered
// and what the caller got. The answer is the one deterministic signal that a
// push or an event was handled (a duplicate writes nothing), so tests wait
// for it instead of sleeping; Inject plays the failures a real delivery meets.
type Frontend struct {
	proc   *Process
	srv    *httptest.Server
	client *http.Client

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every recorded request
	log     []Request
	faults  []injected
}

// Request is one request as the front end saw it.
type Request struct {
	At       time.Time
	Header   http.Header
	Body     []byte
	Called   bool   // it reached the process
	FnStatus int    // what the process answered, when called
	Answer   []byte // the process's answer body
	Status   int    // what the caller got
}

// Acked reports whether the caller got a 2xx.
func (r Request) Acked() bool { return r.Status/100 == 2 }

// Fault is a failure injected into the requests a Frontend forwards.
type Fault int

const (
	// Refuse answers 503 without calling the process.
	Refuse Fault = iota + 1
	// LoseAnswer calls the process, then answers 503 instead of its answer.
	LoseAnswer
)

type injected struct {
	match func(body []byte) bool
	fault Fault
	times int // how many requests it still applies to (<0: all)
}

func newFrontend(p *Process, timeout time.Duration) *Frontend {
	f := &Frontend{proc: p, client: &http.Client{Timeout: timeout}, changed: make(chan struct{})}
	f.srv = httptest.NewServer(f)
	return f
}

// URL is the service's address, as its callers know it.
func (f *Frontend) URL() string { return f.srv.URL }

func (f *Frontend) Close() { f.srv.Close() }

// Inject makes the next times requests whose body matches fail with fault
// (times < 0: every matching request).
func (f *Frontend) Inject(match func(body []byte) bool, fault Fault, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, injected{match: match, fault: fault, times: times})
}

func (f *Frontend) takeFault(body []byte) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.faults {
		in := &f.faults[i]
		if in.times == 0 || !in.match(body) {
			continue
		}
		if in.times > 0 {
			in.times--
		}
		return in.fault
	}
	return 0
}

// Requests returns every recorded request so far.
func (f *Frontend) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// Wait waits until a recorded request satisfies pred, and returns it.
func (f *Frontend) Wait(ctx context.Context, timeout time.Duration, pred func(Request) bool) (Request, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	seen := 0
	for {
		f.mu.Lock()
		log, changed := f.log, f.changed
		f.mu.Unlock()
		for ; seen < len(log); seen++ {
			if pred(log[seen]) {
				return log[seen], nil
			}
		}
		select {
		case <-changed:
		case <-timer.C:
			return Request{}, fmt.Errorf("%s: no such request within %s (%d requests seen)", f.proc.Service.Name, timeout, len(log))
		case <-ctx.Done():
			return Request{}, ctx.Err()
		}
	}
}

func (f *Frontend) record(r Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, r)
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Frontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "front end: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{At: time.Now(), Header: r.Header.Clone(), Body: body}
	fault := f.takeFault(body)
	target := f.proc.URL()
	if fault == Refuse || target == "" {
		rec.Status = http.StatusServiceUnavailable
		f.record(rec)
		http.Error(w, "Service Unavailable", rec.Status)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Connection")
	resp, err := f.client.Do(req)
	if err != nil {
		// The instance died under the request (a crash): Cloud Run answers 503.
		rec.Status = http.StatusServiceUnavailable
		f.record(rec)
		http.Error(w, "Service Unavailable: "+err.Error(), rec.Status)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec.Called, rec.FnStatus, rec.Answer, rec.Status = true, resp.StatusCode, answer, resp.StatusCode
	if err != nil || fault == LoseAnswer {
		rec.Status = http.StatusServiceUnavailable
	}
	// Recorded before replying: the process has returned, so its effects
	// are complete whatever happens to the reply.
	f.record(rec)
	if rec.Status != resp.StatusCode {
		http.Error(w, "front end: the answer is lost", rec.Status)
		return
	}
	if v := resp.Header.Get("Content-Type"); v != "" {
		w.Header().Set("Content-Type", v)
	}
	w.WriteHeader(rec.Status)
	_, _ = w.Write(answer)
}

// Pushed reads the message ID and pedido_id of a wrapped push body; what it
// cannot read stays empty.
func Pushed(body []byte) (messageID, pedidoID string) {
	var env struct {
		Message struct {
			Data      []byte `json:"data"`
			MessageID string `json:"messageId"`
		} `json:"message"`
	}
	_ = json.Unmarshal(body, &env)
	var o struct {
		PedidoID string `json:"pedido_id"`
	}
	_ = json.Unmarshal(env.Message.Data, &o)
	return env.Message.MessageID, o.PedidoID
}
