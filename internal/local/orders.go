package local

import (
	"context"
	"io"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/stream"
)

// Topic is the topic the web application publishes orders on.
const Topic = client.Topic

// Step is one line of an orders file (see client.Step).
type Step = client.Step

// PushResult is what AggregateOrders answered to one push request.
type PushResult = client.PushResult

// ReadSteps reads an orders JSONL file (see client.ReadSteps).
func ReadSteps(r io.Reader) ([]Step, error) { return client.ReadSteps(r) }

// ReadStepsFile reads an orders JSONL file from disk.
func ReadStepsFile(path string) ([]Step, error) { return client.ReadStepsFile(path) }

// Push delivers one order to the server's AggregateOrders.
func Push(ctx context.Context, server string, s Step, publishTime time.Time) (PushResult, error) {
	return client.Server{URL: server}.Push(ctx, s, publishTime)
}

// SetClock moves a virtual-clock server's processing time to t.
func SetClock(ctx context.Context, server string, t time.Time) error {
	_, err := client.Server{URL: server}.SetClock(ctx, t)
	return err
}

// Tick calls AdvanceWatermark as Cloud Scheduler does.
func Tick(ctx context.Context, server string) (stream.TickResult, error) {
	return client.Server{URL: server}.Tick(ctx)
}
