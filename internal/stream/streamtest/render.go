package streamtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// Countries are the country codes IsCountry accepts: enough for 30 keys.
var Countries = []string{
	"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT", "CH", "IE",
	"GB", "DK", "SE", "NO", "FI", "PL", "CZ", "SK", "HU", "RO",
	"BG", "GR", "HR", "SI", "LU", "EE", "LV", "LT", "MT", "CY",
}

// IsCountry accepts the codes in Countries.
func IsCountry(code string) bool { return slices.Contains(Countries, code) }

// Delivery renders an event as the push delivery the web shop's message
// would arrive in: the whole order, its lines as written (SKUs with their
// stray case and spaces), momento_evento as an attribute. An invalid event
// is rendered broken in the way its reason says.
func Delivery(e windowtest.MultiEvent) order.Delivery {
	o := e.Order
	lines := make([]any, 0, len(o.Lineas))
	for _, l := range o.Lineas {
		lines = append(lines, map[string]any{"sku": l.SKU, "cantidad": l.Cantidad, "precio_unitario": l.PrecioUnitario.String()})
	}
	body := map[string]any{
		"pedido_id":     o.PedidoID,
		"cliente_id":    o.ClienteID,
		"pais":          o.Pais,
		"importe_total": o.ImporteTotal.String(),
		"lineas":        lines,
	}
	attrs := map[string]string{order.EventTimeAttribute: o.EventTime.Format(time.RFC3339Nano)}
	var raw []byte
	switch e.Invalid {
	case "":
	case "invalid: bad JSON":
		raw = []byte(`{"pedido_id": "` + o.PedidoID + `", "pais": `)
	case "invalid: missing pedido_id":
		delete(body, "pedido_id")
	case "invalid: importe_total is not a decimal":
		body["importe_total"] = "12,5 EUR"
	case "invalid: bad pais":
		body["pais"] = "XX"
	case "invalid: missing momento_evento":
		delete(attrs, order.EventTimeAttribute)
	default:
		panic(fmt.Sprintf("streamtest: no rendering for %q", e.Invalid))
	}
	if raw == nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			panic(err) // maps of strings and numbers always encode
		}
	}
	return order.Delivery{
		Message: order.Message{Data: raw, Attributes: attrs, MessageID: e.MessageID, PublishTime: e.Now},
		Format:  "push",
	}
}
