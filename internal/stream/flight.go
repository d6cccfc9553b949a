package stream

import "sync"

// flight runs one call per key at a time in this process and shares its
// result with the callers that arrive meanwhile. The first orders of a new
// hour arrive together: without it each would run its own read-then-create
// transaction on the same missing window document, and under pessimistic
// locking (Firestore's server SDKs, and its emulator) they wait on each
// other's lock upgrades until they abort.
type flight struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	err  error
}

func (f *flight) do(key string, fn func() error) error {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.err
	}
	if f.calls == nil {
		f.calls = map[string]*flightCall{}
	}
	c := &flightCall{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()

	c.err = fn()
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	close(c.done)
	return c.err
}
