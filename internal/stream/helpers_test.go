package stream_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// at is a time of the tests' day, 2026-03-14, in UTC.
func at(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }

// newProcessor is a processor of specs over store and sink that logs
// nothing.
func newProcessor(t testing.TB, store docstore.Store, sink stream.Sink, specs ...window.Spec) *stream.Processor {
	t.Helper()
	return newProcessorWith(t, store, sink, specs)
}

func newProcessorWith(t testing.TB, store docstore.Store, sink stream.Sink, specs []window.Spec,
	opts ...stream.Option,
) *stream.Processor {
	t.Helper()
	p, err := stream.New(store, sink, specs, streamtest.IsCountry, logging.Discard(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// skuSpec is the shipped ventas_sku_hora_movil: sliding windows of an hour
// every 15 minutes, keyed by the line's SKU.
func skuSpec() window.Spec { return windowtest.ShippedSpecs()[2] }

// delivery is the push delivery of order id at event time; fields is the
// rest of its JSON body.
func delivery(id string, event time.Time, fields string) order.Delivery {
	return order.Delivery{Format: "push", Message: order.Message{MessageID: "m-" + id,
		Data:       []byte(`{"pedido_id":"` + id + `",` + fields + `}`),
		Attributes: map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)}}}
}

// orderDelivery is an order of one line, SKU MOCH-40L-AZ.
func orderDelivery(id, pais, importe string, event time.Time) order.Delivery {
	return delivery(id, event, `"pais":"`+pais+`","importe_total":"`+importe+
		`","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"`+importe+`"}]`)
}

// mustHandle hands p one delivery at now; an error fails the test.
func mustHandle(t testing.TB, p *stream.Processor, d order.Delivery, now time.Time) stream.Result {
	t.Helper()
	res, err := p.Handle(context.Background(), d, now)
	if err != nil {
		t.Fatalf("handle %s: %v", d.Message.MessageID, err)
	}
	return res
}

// mustHandleBatch hands p the pushes in batches of at most
// stream.MaxBatchOrders and returns their results; an error fails the test.
func mustHandleBatch(t testing.TB, p *stream.Processor, pushes []stream.Push) []stream.Result {
	t.Helper()
	var out []stream.Result
	for batch := range slices.Chunk(pushes, stream.MaxBatchOrders) {
		res, err := p.HandleBatch(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res...)
	}
	return out
}

// mustTick runs p's tick at now; an error fails the test.
func mustTick(t testing.TB, p *stream.Processor, now time.Time) stream.TickResult {
	t.Helper()
	tr, err := p.Tick(context.Background(), now)
	if err != nil {
		t.Fatalf("tick at %s: %v", now.Format(time.DateTime), err)
	}
	return tr
}
