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
	tickLease        time.Duration
	batchWait        time.Duration // 0: batching off, each delivery its own transaction
	batchMax         int
	maxClockSkew     time.Duration
	sessionPartBytes int // tests set it small (export_test.go) to see parts double
}

func defaultOptions() options {
	return options{tickLease: TickLease, maxClockSkew: order.DefaultMaxClockSkew,
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
// as Firestore's limits allow. wait 0 turns batching off.
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
