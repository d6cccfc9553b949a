package functions

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/stream"
)

// HTTP, not CloudEvent: the framework's conversion of a wrapped push body
// into a CloudEvent drops deliveryAttempt and subscription, and rejects a
// push body unless the URL names the topic. As an HTTP function we read
// both formats ourselves (order.DecodePush).

func aggregateOrders(_ context.Context, _ *config.Orders, app *setup.App) (Handler, error) {
	return Handler{Handler: jsonOnly(AggregateOrders{Processor: app.Stream, Now: app.Now, Log: app.Log, budget: &memBudget{capacity: pushBudget}})}, nil
}

// AggregateOrders handles one Pub/Sub push delivery of topic pedidos-nuevos
// (wrapped push body, or Eventarc's binary CloudEvent). 2xx only once the
// order's effect is durable; invalid messages are dead-lettered and
// acknowledged; a backend failure answers 503 so that Pub/Sub redelivers.
type AggregateOrders struct {
	Processor *stream.Processor
	Now       func() time.Time
	Log       *slog.Logger
	budget    *memBudget // bounds the pushes in flight (pushBudget) and each body
}

func (f AggregateOrders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := f.Now()
	body, held, ok := f.budget.readPush(w, r)
	if !ok {
		return
	}
	defer func() { f.budget.release(held) }()
	d, derr := order.DecodePush(r.Header, body)
	if derr != nil {
		if err := f.Processor.HandleUndecodable(ctx, body, "invalid: "+derr.Error(), now); err != nil {
			f.Log.ErrorContext(ctx, "dead letter failed; asking for redelivery", "error", err.Error())
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// What the processor makes of an order grows with its lines, known
	// only now.
	if cost := int64(order.Lines(d.Message.Data)) * pushLineCost; cost > 0 {
		ok, used := f.budget.reserve(cost)
		if !ok {
			f.budget.busy(w, cost, used)
			return
		}
		held += cost
	}
	res, err := f.Processor.Handle(ctx, d, now)
	if err != nil {
		f.Log.ErrorContext(ctx, "order not stored; asking for redelivery", "message_id", d.Message.ID(), "error", err.Error())
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, res)
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
