package stream

import (
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
)

// Option configures a Processor at construction; a Processor has no setters,
// so that every request of a process sees the same settings.
type Option func(*options) error

type options struct {
	tickLease    time.Duration
	batchWait    time.Duration
	batchMax     int
	maxClockSkew time.Duration
	// sessionPartBytes: see WithSessionPartBytes.
	sessionPartBytes int
}

// Defaults of the options: batching off (each delivery its own transaction,
// as before batching existed), TickLease, and order.DefaultMaxClockSkew.
// The server's configuration turns batching on (BATCH_WAIT, BATCH_MAX_ORDERS).
const DefaultBatchMaxOrders = 200

func defaultOptions() options {
	return options{tickLease: TickLease, batchMax: DefaultBatchMaxOrders, maxClockSkew: order.DefaultMaxClockSkew,
		sessionPartBytes: DefaultSessionPartBytes}
}

// WithTickLease sets how long a tick owns an aggregation (default TickLease).
func WithTickLease(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("tick lease %s must be positive", d)
		}
		o.tickLease = d
		return nil
	}
}

// WithBatching makes concurrent Handle calls of this process join a batch:
// the first delivery waits at most wait for others, a batch holds at most
// maxOrders deliveries, and each batch is committed in as few transactions
// as Firestore's limits allow (usually one per aggregation). wait 0 turns
// batching off: every delivery is its own batch, committed at once.
func WithBatching(wait time.Duration, maxOrders int) Option {
	return func(o *options) error {
		if wait < 0 || wait > time.Second {
			return fmt.Errorf("batch wait %s must be between 0 and 1s", wait)
		}
		if maxOrders < 1 || maxOrders > MaxBatchOrders {
			return fmt.Errorf("batch size %d must be between 1 and %d", maxOrders, MaxBatchOrders)
		}
		o.batchWait, o.batchMax = wait, maxOrders
		return nil
	}
}

// WithMaxClockSkew sets how far ahead of processing time an event time may
// be before the order is invalid (default order.DefaultMaxClockSkew).
func WithMaxClockSkew(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("max clock skew %s must be positive", d)
		}
		o.maxClockSkew = d
		return nil
	}
}

// WithSessionPartBytes sets the size past which a session aggregation's
// part documents double (default DefaultSessionPartBytes). Tests set it
// small, so that a few keys take several parts and their doubling.
func WithSessionPartBytes(n int) Option {
	return func(o *options) error {
		if n < 1<<10 || n > DefaultSessionPartBytes {
			return fmt.Errorf("session part bound %d bytes must be between 1 KiB and %d", n, DefaultSessionPartBytes)
		}
		o.sessionPartBytes = n
		return nil
	}
}
