package stream

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// One dedup record per order, for every aggregation at once
// (docs/event-time.md: "a redelivered order is ignored by every aggregation
// at once"), written in the transaction that writes the order's deltas in
// every aggregation.
const (
	dedupControl = "stream/dedup"        // dedupControlDoc
	dedupRecords = "stream/dedup/orders" // dedupDoc per order
)

// LegacyDedupMargin is added to DedupRetention for how long, after the first
// start of this layout, the previous layout's per-aggregation dedup records
// are still consulted: an order the previous version handled can be
// redelivered at most Pub/Sub's retention after it was published, and it
// was published before the fence (see dedupFence); the margin covers clocks
// and the minutes a deploy serves both revisions.
const LegacyDedupMargin = 24 * time.Hour

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
	MessageID    string               `json:"message_id"`
	ReceivedAt   time.Time            `json:"received_at"`
	Aggregations map[string]aggRecord `json:"aggregations"`
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

// legacyOrderDoc is the previous layout's dedup record, at
// aggregations/<agg>/orders/<hash>_<pedido_id>: the order's fate in that
// one aggregation.
type legacyOrderDoc struct {
	Fate Fate `json:"fate"`
}

// dedupControlDoc records when this dedup layout started, and which
// aggregations the previous layout may have left records in.
type dedupControlDoc struct {
	Since       time.Time `json:"since"`
	LegacyUntil time.Time `json:"legacy_until"`
	Legacy      []string  `json:"legacy,omitempty"`
}

// legacyState is what the order transactions need of the control document.
type legacyState struct {
	until time.Time
	aggs  []aggregation // configured aggregations whose legacy records may exist
}

// active reports whether a redelivery handled by the previous layout can
// still arrive at now.
func (l legacyState) active(now time.Time) bool {
	return len(l.aggs) > 0 && now.Before(l.until)
}

// fence caches the control document for the process.
type fence struct {
	mu    sync.Mutex
	ready bool
	st    legacyState
}

// dedupFence returns the legacy state, establishing it on the first start of
// this layout. That first transaction re-stamps every configured
// aggregation's watermark document with StateLayout: the previous version
// reads the watermark in every order transaction and refuses a layout it
// does not know, so from that commit on it cannot count an order (it fails
// and Pub/Sub redelivers to this version), and every order it did count has
// a legacy record. An aggregation whose watermark document existed is one
// the previous version may have served; only those are consulted, and only
// until LegacyUntil. Read once per process.
func (p *Processor) dedupFence(ctx context.Context, now time.Time) (legacyState, error) {
	p.fence.mu.Lock()
	defer p.fence.mu.Unlock()
	if p.fence.ready {
		return p.fence.st, nil
	}
	var ctl dedupControlDoc
	err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		ctl = dedupControlDoc{}
		paths := []string{dedupControl}
		for _, a := range p.aggs {
			paths = append(paths, a.paths.watermark)
		}
		docs, err := tx.Get(paths...)
		if err != nil {
			return err
		}
		if docs[0].Exists {
			return decodeDoc(docs[0], &ctl)
		}
		ctl.Since = now.UTC()
		ctl.LegacyUntil = ctl.Since.Add(DedupRetention + LegacyDedupMargin)
		for i, a := range p.aggs {
			var ws window.WatermarkState
			d := docs[i+1]
			if d.Exists {
				if err := decodeDoc(d, &ws); err != nil {
					return err
				}
				ctl.Legacy = append(ctl.Legacy, a.spec.Name)
			}
			if err := set(tx, a.paths.watermark, ws, time.Time{}); err != nil {
				return err
			}
		}
		return set(tx, dedupControl, ctl, time.Time{})
	})
	if err != nil {
		return legacyState{}, fmt.Errorf("read the dedup layout's control document: %w", err)
	}
	st := legacyState{until: ctl.LegacyUntil}
	for _, a := range p.aggs {
		if slices.Contains(ctl.Legacy, a.spec.Name) {
			st.aggs = append(st.aggs, a)
		}
	}
	p.fence.ready, p.fence.st = true, st
	return st, nil
}

// legacyOrderPath is the previous layout's dedup record of an order in one
// aggregation.
func (p paths) legacyOrder(pedidoID string) string {
	return p.orders + "/" + hashedID(pedidoID)
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
			w := window.Window{Start: st, End: st.Add(s.WindowSize)}
			if t := s.ExpiryOf(w).Add(s.OutOfOrderness); t.After(gone) {
				gone = t
			}
		}
	}
	return dedupExpiry(now, gone)
}
