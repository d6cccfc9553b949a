package functions

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/alpinashop/alpipe/internal/order"
)

// The push memory budget: the heap that the pushes one AggregateOrders
// instance handles at once may take. Each push reserves, before it is read,
// what handling it can allocate (pushCost; after decoding, pushLineCost per
// order line); one that does not fit is answered 503 unread, so that
// Pub/Sub redelivers it later, maybe to another instance. The costs are
// upper bounds measured by TestPushCostCoversAllocations, the bound itself
// is proved by TestAggregateOrdersBoundsPushMemory, and terraform/main.tf
// sizes the service's memory from pushBudget.
const (
	pushBudget   = 160 << 20
	pushBaseCost = 256 << 10 // a push of a few bytes, handled
	// pushByteCost per body byte: the body, its base64-decoded data, the
	// order decoder's buffer (grown by doubling: up to 4 times the data)
	// and the strings decoded from it.
	pushByteCost = 8
	// pushLineCost per order line: the windows and keys it counts in, in
	// every aggregation, and their writes.
	pushLineCost = 16 << 10
)

// pushCost is what a push body of n bytes reserves before it is read.
func pushCost(n int64) int64 { return pushBaseCost + pushByteCost*n }

// chunkedCost is pushCost for a body read without a Content-Length: its
// blocks are allocated besides the body they are joined into.
func chunkedCost(n int64) int64 { return pushCost(n) + n }

// The largest reservation fits the budget, or that push would never be
// admitted and Pub/Sub would give it up to the dead-letter topic.
const _ = uint(pushBudget - pushBaseCost - (pushByteCost+1)*maxPushBody - pushLineCost*order.MaxLineas)

// memBudget is a count of reserved bytes that never exceeds its capacity.
type memBudget struct {
	mu             sync.Mutex
	capacity, used int64
}

// reserve takes n bytes if they fit, and reports what was in use.
func (b *memBudget) reserve(n int64) (ok bool, used int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.capacity {
		return false, b.used
	}
	b.used += n
	return true, b.used - n
}

func (b *memBudget) release(n int64) { b.reserve(-n) } // a negative reservation always fits

// busy answers 503 to a push that does not fit: Pub/Sub redelivers it with
// backoff, and slows its pushes down meanwhile.
func (b *memBudget) busy(w http.ResponseWriter, need, used int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("instance busy: this push needs %d bytes of push memory, %d of the %d are reserved; retry later", need, used, b.capacity), http.StatusServiceUnavailable)
}

// readPush reads a push body whole once its cost is reserved: exactly
// Content-Length bytes, or, for a chunked body, the bound's cost until its
// length is known. A body over maxPushBody is answered 413 (unread when
// declared). On success the caller owns held and releases it when the
// request is answered; otherwise readPush has answered.
func (b *memBudget) readPush(w http.ResponseWriter, r *http.Request) (body []byte, held int64, ok bool) {
	n := r.ContentLength
	if n > maxPushBody {
		tooLarge(w, maxPushBody)
		return nil, 0, false
	}
	held = chunkedCost(maxPushBody)
	if n >= 0 {
		held = pushCost(n)
	}
	if ok, used := b.reserve(held); !ok {
		b.busy(w, held, used)
		return nil, 0, false
	}
	var err error
	if n >= 0 {
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = readChunked(r.Body)
	}
	switch {
	case err == errTooLarge:
		b.release(held)
		tooLarge(w, maxPushBody)
		return nil, 0, false
	case err != nil:
		b.release(held)
		http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
		return nil, 0, false
	}
	if n < 0 {
		// The chunked body's length is known now: hold only its cost.
		b.release(held - chunkedCost(int64(len(body))))
		held = chunkedCost(int64(len(body)))
	}
	return body, held, true
}

var errTooLarge = fmt.Errorf("body larger than %d bytes", maxPushBody)

// readChunked reads a body of unknown length in blocks, then joins them:
// the body is allocated once at its size, not grown by doubling (which
// allocates several times the final size on the way).
func readChunked(r io.Reader) ([]byte, error) {
	const block = 64 << 10
	r = io.LimitReader(r, maxPushBody+1) // one byte past the bound tells it is exceeded
	var blocks [][]byte
	total := 0
	for {
		buf := make([]byte, block)
		n, err := io.ReadFull(r, buf)
		total += n
		if total > maxPushBody {
			return nil, errTooLarge
		}
		blocks = append(blocks, buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return bytes.Join(blocks, nil), nil // one allocation of the joined size
}
