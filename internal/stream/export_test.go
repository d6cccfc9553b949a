package stream

import "fmt"

// WithSessionPartBytes sets the size past which a session aggregation's
// parts double, so that a few keys take several parts and their doubling.
func WithSessionPartBytes(n int) Option {
	return func(o *options) error {
		if n < 1<<10 || n > DefaultSessionPartBytes {
			return fmt.Errorf("session part bound %d bytes must be between 1 KiB and %d", n, DefaultSessionPartBytes)
		}
		o.sessionPartBytes = n
		return nil
	}
}
