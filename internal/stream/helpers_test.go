package stream_test

import (
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

// skuSpec is the shipped ventas_sku_hora_movil: sliding windows of an hour
// every 15 minutes, keyed by the line's SKU, the defaults otherwise.
func skuSpec() window.Spec {
	s := window.Defaults()
	s.Name, s.KeyField, s.Period = "ventas_sku_hora_movil", stream.KeySKU, 15*time.Minute
	return s
}

// orderDelivery is an order of one line, SKU MOCH-40L-AZ.
func orderDelivery(id, pais, importe string, event time.Time) order.Delivery {
	return order.Delivery{Format: "push", Message: order.Message{MessageID: "m-" + id,
		Data:       []byte(`{"pedido_id":"` + id + `","pais":"` + pais + `","importe_total":"` + importe + `","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"` + importe + `"}]}`),
		Attributes: map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)}}}
}
