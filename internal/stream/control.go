package stream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// fence remembers, per process, that the control document holds every
// configured aggregation.
type fence struct {
	mu    sync.Mutex
	ready bool
}

// ensureControl makes sure the control document exists and names every
// configured aggregation, once per process.
//
// The first process of layout 3 creates it, in one transaction that copies
// every aggregation's watermark from its previous watermark document and
// re-stamps that document with layout 3: the previous binary reads its
// watermark document in every order transaction and refuses a layout it
// does not know, so from that commit on it cannot count an order (its
// deliveries fail and Pub/Sub redelivers them to this version). Its cells
// and deltas are then final, and the first tick of each aggregation moves
// them into the window state (migrate). The upgrade from layout 1's
// per-aggregation dedup records carries on as layout 2 started it (its
// stream/dedup document is copied), or starts now for a layout-1 state.
//
// An aggregation configured later is added with Since = the open
// generation: no record before it can hold its elements.
func (p *Processor) ensureControl(ctx context.Context, now time.Time) error {
	p.fence.mu.Lock()
	defer p.fence.mu.Unlock()
	if p.fence.ready {
		return nil
	}
	err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		paths := []string{controlPath, dedupControl}
		for _, a := range p.aggs {
			paths = append(paths, a.paths.watermark)
		}
		docs, err := tx.Get(paths...)
		if err != nil {
			return err
		}
		var ctl controlDoc
		if docs[0].Exists {
			if err := decodeDoc(docs[0], &ctl); err != nil {
				return err
			}
			missing := false
			for _, a := range p.aggs {
				if _, ok := ctl.Aggs[a.spec.Name]; !ok {
					missing = true
					ctl.Aggs[a.spec.Name] = aggControl{Since: ctl.Gen}
				}
			}
			if !missing {
				return nil
			}
			return set(tx, controlPath, ctl, time.Time{})
		}
		ctl = controlDoc{Gen: 1, Aggs: map[string]aggControl{}, Since: now.UTC()}
		var legacy []string
		for i, a := range p.aggs {
			var ws window.WatermarkState
			d := docs[i+2]
			if d.Exists {
				if err := decodeDoc(d, &ws); err != nil {
					return err
				}
				legacy = append(legacy, a.spec.Name)
			}
			ctl.Aggs[a.spec.Name] = aggControl{WatermarkState: ws, Since: 1}
			if err := set(tx, a.paths.watermark, ws, time.Time{}); err != nil {
				return err
			}
		}
		if docs[1].Exists {
			var old dedupControlDoc
			if err := decodeDoc(docs[1], &old); err != nil {
				return err
			}
			ctl.Since, ctl.LegacyUntil, ctl.Legacy = old.Since, old.LegacyUntil, old.Legacy
		} else if len(legacy) > 0 {
			ctl.LegacyUntil = ctl.Since.Add(DedupRetention + LegacyDedupMargin)
			ctl.Legacy = legacy
		}
		return set(tx, controlPath, ctl, time.Time{})
	})
	if err != nil {
		return fmt.Errorf("read the control document %s: %w", controlPath, err)
	}
	p.fence.ready = true
	return nil
}
