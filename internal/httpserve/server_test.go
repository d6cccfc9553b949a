package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type answer struct {
	status int
	err    error
}

// get GETs / of the server at addr.
func get(addr string) <-chan answer {
	c := make(chan answer, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			c <- answer{err: err}
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c <- answer{status: resp.StatusCode}
	}()
	return c
}

func TestShutdownDrainsThenCuts(t *testing.T) {
	tests := []struct {
		name      string
		work      time.Duration // how long the handler works unless cancelled
		grace     time.Duration
		want      Drain
		cancelled bool // the handler saw its context cancelled
		status    int  // what the client got (0: no answer)
	}{
		{name: "a request shorter than the grace finishes", work: 300 * time.Millisecond, grace: 3 * time.Second,
			want: Drain{InFlight: 1, Drained: 1}, status: 200},
		{name: "a request past the grace is cancelled and returns", work: time.Hour, grace: 300 * time.Millisecond,
			want: Drain{InFlight: 1, Cut: 1}, cancelled: true, status: 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entered := make(chan struct{})
			sawCancel := make(chan bool, 1)
			s, _, addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				select {
				case <-time.After(tt.work):
					sawCancel <- false
					w.WriteHeader(http.StatusOK)
				case <-r.Context().Done():
					sawCancel <- true
					// What an ingest does: record the failure, answer non-2xx.
					w.WriteHeader(http.StatusServiceUnavailable)
				}
			}), Options{Grace: tt.grace})
			got := get(addr)
			<-entered
			d := s.Shutdown("test")
			if diff := cmp.Diff(tt.want, d, cmpopts.IgnoreFields(Drain{}, "Elapsed")); diff != "" {
				t.Errorf("drain (-want +got):\n%s", diff)
			}
			if c := <-sawCancel; c != tt.cancelled {
				t.Errorf("handler saw its context cancelled: %v, want %v", c, tt.cancelled)
			}
			if a := <-got; a.status != tt.status {
				t.Errorf("client got %d (%v), want %d", a.status, a.err, tt.status)
			}
			if tt.cancelled && (d.Elapsed < tt.grace || d.Elapsed > tt.grace+time.Second) {
				t.Errorf("shutdown took %s, want the grace %s and the handler's return", d.Elapsed, tt.grace)
			}
			t.Logf("shutdown: %+v", d)
		})
	}
}

// Once shutdown begins nothing new is accepted, while the request in
// flight still finishes.
func TestShutdownRefusesNewConnections(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	s, _, addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), Options{Grace: 5 * time.Second})
	first := get(addr)
	<-entered
	done := make(chan Drain, 1)
	go func() { done <- s.Shutdown("test") }()
	deadline := time.Now().Add(2 * time.Second)
	var dialErr error
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			dialErr = err
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	if dialErr == nil {
		t.Fatal("the listener still accepts 2 s after shutdown began")
	}
	t.Logf("dial after shutdown began: %v", dialErr)
	select {
	case <-first:
		t.Fatal("the request in flight was answered before it finished")
	default:
	}
	close(release)
	if a := <-first; a.status != http.StatusOK {
		t.Errorf("request in flight got %d (%v), want 200", a.status, a.err)
	}
	if d := <-done; d.Drained != 1 || d.Cut != 0 {
		t.Errorf("drain %+v, want the request drained", d)
	}
}

// Run stops on its context and returns nil once drained.
func TestRunStopsOnContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := New(http.NotFoundHandler(), Options{Grace: time.Second})
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx, ln) }()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
