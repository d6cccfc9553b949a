package functions

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
)

// bigOrder is an order padded with whitespace so that its push body is
// about size bytes.
func bigOrder(t testing.TB, i, size int) []byte {
	data := fmt.Sprintf(`{"pedido_id":"P-%d","pais":"ES","importe_total":"1"`, i)
	pad := (size-400)*3/4 - len(data) - 1
	return pushBody(t, fmt.Sprintf("m-big-%d", i), []byte(data+strings.Repeat(" ", pad)+"}"))
}

// gatedBody serves b but blocks before its last byte until gate closes,
// so that the test holds every admitted request in flight at once. held is
// what all requests have read and not yet answered.
type gatedBody struct {
	b          []byte
	off        int
	gate       <-chan struct{}
	blocked    chan<- struct{}
	held, peak *atomic.Int64
	stopped    bool
}

func (g *gatedBody) Read(p []byte) (int, error) {
	if g.off == len(g.b) {
		return 0, io.EOF
	}
	if g.off == len(g.b)-1 && !g.stopped {
		g.stopped = true
		g.blocked <- struct{}{}
		<-g.gate
	}
	end := min(len(g.b)-1, g.off+len(p))
	if g.stopped {
		end = len(g.b)
	}
	n := copy(p, g.b[g.off:end])
	g.off += n
	for h := g.held.Add(int64(n)); ; {
		if pk := g.peak.Load(); h <= pk || g.peak.CompareAndSwap(pk, h) {
			break
		}
	}
	return n, nil
}

// TestAggregateOrdersBoundsPushMemory: concurrent pushes beyond the
// instance's push memory budget are answered 503 with the reason, unread,
// so that Pub/Sub redelivers them; the bytes the instance holds never
// exceed the budget; the admitted ones are handled; and the budget is whole
// again afterwards.
func TestAggregateOrdersBoundsPushMemory(t *testing.T) {
	now := time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)
	p := testProcess(t, &now, nil, AggregateOrdersName)
	h := handler(t, p, AggregateOrdersName)
	const pushes = 10                        // 10 x 14 MiB is beyond the budget
	big := bigOrder(t, 0, maxPushBody-1<<10) // one message, redelivered at once
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			gate, blocked := make(chan struct{}), make(chan struct{}, pushes)
			var held, peak atomic.Int64
			codes, answers := make([]int, pushes), make([]string, pushes)
			answered := make(chan int, pushes)
			var wg sync.WaitGroup
			bodies := make([]*gatedBody, pushes)
			for i := range pushes {
				body := &gatedBody{b: big, gate: gate, blocked: blocked, held: &held, peak: &peak}
				bodies[i] = body
				wg.Go(func() {
					req := httptest.NewRequest(http.MethodPost, "/", body)
					req.Header.Set("Content-Type", "application/json")
					req.ContentLength = int64(len(body.b))
					if chunked {
						req.ContentLength = -1
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					held.Add(-int64(body.off))
					codes[i], answers[i] = rec.Code, strings.TrimSpace(rec.Body.String())
					answered <- i
				})
			}
			// Every push is now either held in flight (blocked reading its
			// last byte) or answered without being read.
			inFlight := 0
			for range pushes {
				select {
				case <-blocked:
					inFlight++
				case i := <-answered:
					if codes[i] != http.StatusServiceUnavailable || !strings.Contains(answers[i], "push memory") || bodies[i].off != 0 {
						t.Errorf("push %d answered %d %q after reading %d bytes while the others were in flight, want 503 naming the push memory budget, unread",
							i, codes[i], answers[i], bodies[i].off)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("pushes neither in flight nor answered after 30 s")
				}
			}
			if got := peak.Load(); got > pushBudget {
				t.Errorf("the instance held %d bytes of push bodies at once, more than its budget of %d", got, pushBudget)
			}
			if inFlight == 0 || inFlight == pushes {
				t.Errorf("%d of %d pushes in flight at once, want some but not all", inFlight, pushes)
			}
			close(gate)
			wg.Wait()
			ok := 0
			for i, c := range codes {
				switch c {
				case http.StatusOK:
					ok++
				case http.StatusServiceUnavailable:
				default:
					t.Errorf("push %d answered %d %.200q, want 200 or 503", i, c, answers[i])
				}
			}
			if ok != inFlight {
				t.Errorf("%d pushes handled, want the %d admitted", ok, inFlight)
			}
			// Released: a push as large as any is admitted again.
			if code, answer := post(h, big, false); code != http.StatusOK {
				t.Errorf("push after the others answered %d %.200q, want 200", code, answer)
			}
		})
	}
}

// TestPushCostCoversAllocations: what a push reserves (pushCost, plus
// pushLineCost per order line) is at least what handling it allocates,
// whatever its shape, so the pushes in flight never take more heap than the
// budget. Allocation is an upper bound on what a request keeps live.
func TestPushCostCoversAllocations(t *testing.T) {
	if testing.Short() {
		// It handles production-size pushes one after another and counts
		// bytes: nothing concurrent for -race to see, 18 s under it.
		t.Skip("-short: measures the allocations of production-size pushes; run without -short")
	}
	now := time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)
	p := testProcess(t, &now, nil, AggregateOrdersName)
	h := handler(t, p, AggregateOrdersName)
	const size = 4 << 20
	lines := func(n int, line func(i int) string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = line(i)
		}
		return strings.Join(s, ",")
	}
	sku := func(tag string) func(int) string {
		return func(i int) string {
			return fmt.Sprintf(`{"sku":"%s-%d","cantidad":1,"precio_unitario":"1.50"}`, tag, i)
		}
	}
	orderOf := func(id, lineas string) []byte {
		return []byte(`{"pedido_id":"` + id + `","cliente_id":"C-1","pais":"ES","importe_total":"1","lineas":[` + lineas + `]}`)
	}
	tests := []struct {
		name    string
		body    []byte
		lines   int
		chunked bool
		want    int
	}{
		{name: "one-line order", body: pushBody(t, "m-1", orderOf("P-1", sku("A")(1))), lines: 1, want: 200},
		{name: "1000 SKUs", body: pushBody(t, "m-2", orderOf("P-2", lines(1000, sku("B")))), lines: 1000, want: 200},
		{name: "MaxLineas SKUs", body: pushBody(t, "m-3", orderOf("P-3", lines(order.MaxLineas, sku("C")))), lines: order.MaxLineas, want: 200},
		{name: "MaxLineas+1 empty lines", body: pushBody(t, "m-4", orderOf("P-4", lines(order.MaxLineas+1, func(int) string { return "{}" }))), want: 200},
		{name: "4 MiB of empty lines", body: pushBody(t, "m-5", orderOf("P-5", lines(size/4, func(int) string { return "{}" }))), want: 200},
		{name: "4 MiB pedido_id", body: pushBody(t, "m-6", orderOf(strings.Repeat("x", size), "")), want: 200},
		{name: "4 MiB SKU", body: pushBody(t, "m-7", orderOf("P-7", `{"sku":"`+strings.Repeat("s", size)+`","cantidad":1,"precio_unitario":"1"}`)), lines: 1, want: 200},
		{name: "1000 SKUs of 256 bytes", body: pushBody(t, "m-12", orderOf("P-12", lines(1000, sku(strings.Repeat("L", 250))))), lines: 1000, want: 200},
		{name: "4 MiB pedido_id, chunked", body: pushBody(t, "m-13", orderOf(strings.Repeat("y", size), "")), chunked: true, want: 200},
		{name: "4 MiB of whitespace", body: bigOrder(t, 8, size), want: 200},
		{name: "4 MiB not JSON", body: pushBody(t, "m-9", bytes.Repeat([]byte("x"), size)), want: 200},
		{name: "4 MiB not UTF-8", body: pushBody(t, "m-10", bytes.Repeat([]byte{0xff}, size)), want: 200},
		{name: "4 MiB not a push body", body: []byte(`{"message":{"data":"` + strings.Repeat("%", size) + `"}}`), want: 204},
		{name: "100 attributes of 1 KiB", body: func() []byte {
			attrs := []string{`"momento_evento":"2026-03-14T17:42:00Z"`}
			for i := range 99 {
				attrs = append(attrs, fmt.Sprintf(`"a%d":"%s"`, i, strings.Repeat("v", 1024)))
			}
			return []byte(`{"message":{"data":"e30=","attributes":{` + strings.Join(attrs, ",") + `},"messageId":"m-11"}}`)
		}(), want: 200},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The embedded store pays for earlier writes in a later
			// transaction (its file grows and is remapped): a small push
			// first takes that cost out of the measurement.
			post(h, pushBody(t, fmt.Sprintf("m-warm-%d", i), []byte("{}")), false)
			var (
				code   int
				answer string
			)
			alloc := allocated(func() { code, answer = post(h, tt.body, tt.chunked) })
			if code != tt.want {
				t.Fatalf("answered %d %.200q, want %d", code, answer, tt.want)
			}
			reserved := pushCost(int64(len(tt.body))) + int64(tt.lines)*pushLineCost
			if tt.chunked {
				reserved = chunkedCost(int64(len(tt.body))) + int64(tt.lines)*pushLineCost
			}
			t.Logf("%d body bytes, %d lines: allocated %d, reserved %d (%.0f%%)", len(tt.body), tt.lines, alloc, reserved, 100*float64(alloc)/float64(reserved))
			if int64(alloc) > reserved {
				t.Errorf("handling a push of %d bytes and %d lines allocated %d bytes, more than the %d it reserves", len(tt.body), tt.lines, alloc, reserved)
			}
		})
	}
}

// post sends body as a push, with its Content-Length unless chunked.
func post(h http.Handler, body []byte, chunked bool) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if chunked {
		req.ContentLength = -1
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// allocated is how many bytes f allocates. The count is the whole
// process's, so it first waits for what earlier requests left running (an
// outbox flush) to stop allocating.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		runtime.ReadMemStats(&after)
		if after.TotalAlloc-before.TotalAlloc < 16<<10 {
			break
		}
		before = after
	}
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// pushBody is a wrapped Pub/Sub push request carrying data.
func pushBody(t testing.TB, messageID string, data []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"subscription": "projects/p/subscriptions/s", "message": map[string]any{
		"data": base64.StdEncoding.EncodeToString(data), "messageId": messageID, "publishTime": "2026-03-14T17:51:00Z",
		"attributes": map[string]string{"momento_evento": "2026-03-14T17:42:00Z"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
