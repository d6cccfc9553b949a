package streamtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
)

// Countries are the country codes IsCountry accepts: enough for 30 keys.
var Countries = []string{
	"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT", "CH", "IE",
	"GB", "DK", "SE", "NO", "FI", "PL", "CZ", "SK", "HU", "RO",
	"BG", "GR", "HR", "SI", "LU", "EE", "LV", "LT", "MT", "CY",
}

// IsCountry accepts the codes in Countries.
func IsCountry(code string) bool { return slices.Contains(Countries, code) }

// encode renders an order's body and attributes as a push delivery, broken
// in the way invalid says.
func encode(body map[string]any, attrs map[string]string, invalid, pedidoID, messageID string, now time.Time) order.Delivery {
	var raw []byte
	switch invalid {
	case "":
	case "invalid: bad JSON":
		raw = []byte(`{"pedido_id": "` + pedidoID + `", "pais": `)
	case "invalid: missing pedido_id":
		delete(body, "pedido_id")
	case "invalid: importe_total is not a decimal":
		body["importe_total"] = "12,5 EUR"
	case "invalid: bad pais":
		body["pais"] = "XX"
	case "invalid: missing momento_evento":
		delete(attrs, order.EventTimeAttribute)
	default:
		panic(fmt.Sprintf("streamtest: no rendering for %q", invalid))
	}
	if raw == nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			panic(err) // maps of strings and numbers always encode
		}
	}
	return order.Delivery{
		Message: order.Message{Data: raw, Attributes: attrs, MessageID: messageID, PublishTime: now},
		Format:  "push",
	}
}
