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
	// document's tag), for the tick's fold of that generation.
	Gen int64 `json:"gen,omitempty"`
	// M is the order's own measures, what most keys count (recKey).
	M window.Measures `json:"m,omitzero"`
}

// aggRecord is an order's fate in one aggregation: per window (start) it
// counted in or was dropped from, and the keys it counts under. Its
// elements for the fold are every accepted window times every key, at
// Watermark (too late is decided per window, so all keys of a window share
// its fate). They are not written out one by one: with sliding windows
// that would repeat the key and measures per window, and the record's
// bytes, which the order commit and the tick's listing of a generation
// pay for, would grow with windows times aggregations.
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
