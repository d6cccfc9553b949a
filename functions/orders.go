package functions

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
)

// maxPushBody bounds what one push request may carry: Pub/Sub messages are
// at most 10 MB, orders a few KB.
const maxPushBody = 10 << 20

func init() {
	// HTTP, not CloudEvent: the framework's conversion of a wrapped push body
	// into a CloudEvent drops deliveryAttempt and subscription, and rejects a
	// push body unless the URL names the topic. As an HTTP function we read
	// both formats ourselves (order.DecodePush).
	functions.HTTP(AggregateOrdersName, AggregateOrders)
	functions.HTTP(AdvanceWatermarkName, AdvanceWatermark)
}

// AggregateOrders handles one Pub/Sub push delivery of topic pedidos-nuevos
// (wrapped push body, or Eventarc's binary CloudEvent). 2xx only once the
// order's effect is durable; invalid messages are dead-lettered and
// acknowledged; a backend failure answers 503 so that Pub/Sub redelivers.
func AggregateOrders(w http.ResponseWriter, r *http.Request) {
	app, err := current()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	proc, err := app.StreamProcessor()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	ctx := r.Context()
	now := app.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPushBody+1))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	d, derr := order.DecodePush(r.Header, body)
	if derr == nil && len(body) > maxPushBody {
		derr = errors.New("push body larger than 10 MB")
	}
	if derr != nil {
		if err := proc.HandleUndecodable(ctx, body, "invalid: "+derr.Error(), now); err != nil {
			app.Logger().ErrorContext(ctx, "dead letter failed; asking for redelivery", "error", err.Error())
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	res, err := proc.Handle(ctx, d, now)
	if err != nil {
		app.Logger().ErrorContext(ctx, "order not stored; asking for redelivery", "message_id", d.Message.ID(), "error", err.Error())
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// AdvanceWatermark is the Cloud Scheduler tick. Overlapping or repeated
// ticks are harmless: one that finds another holding the lease answers 200
// with nothing done, so the scheduler does not retry it.
func AdvanceWatermark(w http.ResponseWriter, r *http.Request) {
	app, err := current()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	proc, err := app.StreamProcessor()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	res, err := proc.Tick(r.Context(), app.Now())
	if errors.Is(err, stream.ErrTickBusy) {
		// 200, not an error: the scheduler must not retry, the other tick
		// does the work. The result marks every aggregation Busy.
		writeJSON(w, http.StatusOK, res)
		return
	}
	if err != nil {
		app.Logger().ErrorContext(r.Context(), "tick failed", "error", err.Error())
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
