package stream

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

const dedupRecords = "stream/dedup/orders"

// dedupPath: shops number orders sequentially, and Firestore splits a
// collection by ID range; a hash prefix spreads the writes over the key
// space instead of hammering its end.
func dedupPath(pedidoID string) string {
	return dedupRecords + "/" + hashedID(pedidoID)
}

func hashedID(pedidoID string) string {
	h := fnv.New32a()
	h.Write([]byte(pedidoID))
	return fmt.Sprintf("%04x", h.Sum32()&0xffff) + "_" + docstore.ID(pedidoID)
}

// dedupDoc is an order's dedup record: what its first delivery did in each
// aggregation.
type dedupDoc struct {
	PedidoID     string               `json:"pedido_id,omitempty"`
	MessageID    string               `json:"message_id"`
	ReceivedAt   time.Time            `json:"received_at"`
	EventTime    time.Time            `json:"event_time,omitzero"`
	Aggregations map[string]aggRecord `json:"aggregations"`
	Gen          int64                `json:"gen,omitempty"` // the generation read, also the tag
	M            window.Measures      `json:"m,omitzero"`    // the order's own measures, what most keys count
}

// aggRecord is an order's fate in one aggregation. Its elements for the
// fold are every accepted window times every key (too late is decided per
// window, so all keys of a window share its fate): written out one by one
// they would repeat key and measures per sliding window, and the record's
// bytes, which the order commit and the tick's listing pay for, would grow
// with windows times aggregations.
type aggRecord struct {
	Fate      Fate        `json:"fate"` // Accepted (in some window), TooLate (in all), NoElements
	Watermark time.Time   `json:"watermark,omitzero"`
	Accepted  []time.Time `json:"accepted,omitempty"`
	TooLate   []time.Time `json:"too_late,omitempty"`
	Keys      []recKey    `json:"keys,omitempty"` // ascending; none unless Accepted
}

// recKey is a key an order counts under, with its measures when they are
// not the order's own (dedupDoc.M): those of its lines of one SKU.
type recKey struct {
	Key string           `json:"k"`
	M   *window.Measures `json:"m,omitempty"`
}

// recordExpiry is Pub/Sub's retention after the latest moment one of the
// windows the order counted in can expire (end + L + D, since W <= now - D).
func recordExpiry(specs map[string]window.Spec, rec dedupDoc, now time.Time) time.Time {
	gone := now
	for name, r := range rec.Aggregations {
		s := specs[name]
		for _, st := range r.Accepted {
			w := window.Window{Start: st, End: st.Add(s.Size())}
			if t := s.ExpiryOf(w).Add(s.OutOfOrderness); t.After(gone) {
				gone = t
			}
		}
	}
	return dedupExpiry(now, gone)
}
