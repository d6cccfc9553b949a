package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
)

// tap stands between the emulator's push subscription and AggregateOrders.
// It forwards every request unchanged and records, per message ID, what the
// function answered and what the emulator got, for two reasons:
//
//   - It is the one deterministic signal that a push was handled. Pub/Sub
//     delivers asynchronously and a duplicate writes nothing anywhere, so
//     the store cannot tell that it was delivered; the answer can. The
//     test waits for it before moving the clock (bounded, no sleeps).
//   - It injects the failures a real push meets: a delivery refused before
//     the function runs (instance unavailable) and an answer lost after the
//     function committed (timeout, crash before replying). Both answer 503,
//     which Pub/Sub takes as a nack and redelivers.
type tap struct {
	target string
	client *http.Client

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every recorded attempt
	byID    map[string][]attempt
	faults  map[string]fault // pedido_id -> what to do to its next delivery
}

type fault int

const (
	// refuse answers 503 without calling the function.
	refuse fault = iota + 1
	// loseAnswer calls the function, then answers 503 instead of its answer.
	loseAnswer
)

// attempt is one push delivery as the tap saw it.
type attempt struct {
	MessageID string
	PedidoID  string
	Status    int           // what the emulator got
	Called    bool          // the request reached the function
	FnStatus  int           // what the function answered, when called
	Answer    stream.Result // the function's 200 body
}

// handled reports whether the emulator got an acknowledgement.
func (a attempt) handled() bool { return a.Status/100 == 2 }

// String is the attempt as the assertions compare it.
func (a attempt) String() string {
	fn := "not called"
	switch {
	case a.Called && a.FnStatus == http.StatusOK:
		fn = "answered " + fateText(a.Answer)
	case a.Called:
		fn = fmt.Sprintf("answered HTTP %d", a.FnStatus)
	}
	return fmt.Sprintf("emulator got %d, function %s", a.Status, fn)
}

func newTap(target string) *tap {
	return &tap{
		target:  target,
		client:  &http.Client{Timeout: ackDeadline},
		changed: make(chan struct{}),
		byID:    map[string][]attempt{},
		faults:  map[string]fault{},
	}
}

// inject makes the next delivery of an order with this pedido_id fail.
func (t *tap) inject(pedidoID string, f fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.faults[pedidoID] = f
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "e2e tap: read push body: "+err.Error(), http.StatusBadRequest)
		return
	}
	a := peek(body)
	t.mu.Lock()
	f := t.faults[a.PedidoID]
	delete(t.faults, a.PedidoID)
	t.mu.Unlock()

	if f == refuse {
		a.Status = http.StatusServiceUnavailable
		t.record(a)
		http.Error(w, "e2e tap: delivery refused", a.Status)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, t.target+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Connection")
	resp, err := t.client.Do(req)
	if err != nil {
		a.Status = http.StatusBadGateway
		t.record(a)
		http.Error(w, "e2e tap: "+err.Error(), a.Status)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.Called, a.FnStatus, a.Status = true, resp.StatusCode, resp.StatusCode
	if err != nil {
		a.Status = http.StatusBadGateway
	}
	if resp.StatusCode == http.StatusOK {
		_ = json.Unmarshal(answer, &a.Answer)
	}
	if f == loseAnswer {
		a.Status = http.StatusServiceUnavailable
	}
	// Recorded before replying: the function has returned, so its effects
	// are complete whatever happens to the reply.
	t.record(a)
	if a.Status != resp.StatusCode {
		http.Error(w, "e2e tap: the function's answer is not passed on", a.Status)
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(answer)
}

func (t *tap) record(a attempt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byID[a.MessageID] = append(t.byID[a.MessageID], a)
	close(t.changed)
	t.changed = make(chan struct{})
}

// waitHandled waits until the emulator got an acknowledgement for message
// id, and returns its attempts up to that one. Attempts after it (a
// redelivery Pub/Sub is allowed to make anyway) are not returned, so that
// what the test compares does not depend on timing.
func (t *tap) waitHandled(ctx context.Context, id string, timeout time.Duration) ([]attempt, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		t.mu.Lock()
		atts := t.byID[id]
		changed := t.changed
		t.mu.Unlock()
		for i, a := range atts {
			if a.handled() {
				return atts[:i+1], nil
			}
		}
		select {
		case <-changed:
		case <-timer.C:
			return atts, fmt.Errorf("message %s not acknowledged within %s (attempts so far: %v)", id, timeout, atts)
		case <-ctx.Done():
			return atts, fmt.Errorf("message %s: %w", id, ctx.Err())
		}
	}
}

// peek reads the message ID and pedido_id of a wrapped push body; fields it
// cannot read stay empty, and the function judges the body itself.
func peek(body []byte) attempt {
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
	return attempt{MessageID: env.Message.MessageID, PedidoID: o.PedidoID}
}

// fateText is how the demo prints what handling did with an order.
func fateText(r stream.Result) string {
	if r.Invalid != "" {
		return r.Invalid
	}
	return string(r.Fate())
}
