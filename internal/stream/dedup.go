package stream

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// One dedup record per order, for every aggregation at once
// (docs/event-time.md: "a redelivered order is ignored by every aggregation
// at once"), the only document an order transaction writes: it carries the
// order's elements for every aggregation to the tick's fold (state.go).
const dedupRecords = "stream/dedup/orders" // dedupDoc per order

// dedupPath is the order's dedup record. Shops number orders sequentially,
// and Firestore splits a collection by ID range: a hash prefix spreads the
// records' writes over the key space instead of hammering its end.
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
	// Gen is the generation the order transaction read (also the
	// document's tag), and Elements, per aggregation, what the order
	// counts in, for the tick's fold of that generation.
	Gen      int64                   `json:"gen,omitempty"`
	Elements map[string][]recElement `json:"elements,omitempty"`
}

// aggRecord is an order's fate in one aggregation: per window (start) it
// counted in or was dropped from. Keys are not recorded: they follow from
// the order (its field, or its lines' SKUs).
type aggRecord struct {
	Fate      Fate        `json:"fate"` // Accepted (in some window), TooLate (in all), NoElements
	Watermark time.Time   `json:"watermark,omitzero"`
	Accepted  []time.Time `json:"accepted,omitempty"`
	TooLate   []time.Time `json:"too_late,omitempty"`
}

// recordExpiry is when an order's dedup record may go: Pub/Sub's retention
// after the latest moment one of the windows it counted in can expire
// (end + L + D, since W <= now - D); a record of nothing accepted only
// needs the retention.
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
